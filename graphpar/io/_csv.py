"""CSV and TSV edge lists with a header of column names: reading, writing, and vertex ids.

A file such as ::

    from,to,km
    Rome,Florence,273.5
    Florence,Pisa,85.2

is read by :func:`read_csv_graph` (through :func:`graphpar.io.read_graph`,
``format="csv"`` or ``"tsv"``, or the suffixes ``.csv`` and ``.tsv``,
optionally compressed). Columns are chosen by name (or 0-based position):
``source`` and ``target`` default to the first two columns; ``weight`` to the
column named ``weight`` when there is one, else the third column of a file
with exactly three (as ``u v w`` edge lists have it), else none: every edge
weighs 1, as with ``weight=False``.

Vertex ids:

* When every id is a vertex number -- a non-negative integer in canonical
  form (``0``, or digits without a leading zero) of at most ``2**63 - 1``,
  quoted or not -- the ids are the vertex numbers, as in the other edge-list
  formats (``n = max id + 1``); a graph whose largest id is far above the
  number of ids present warns and suggests ``relabel=True``, which numbers
  the ids present ``0 .. k-1`` in increasing order and keeps them as
  ``g.labels`` (int64).
* Otherwise every id of the file is a string label (``"Rome"``, ``"-1"``,
  ``"+7"``, ``"007"``, ``"7.0"``, an integer beyond int64): ``"007"`` and
  ``"7"`` are then two labels, never one vertex. The labels are numbered in
  order of first appearance (row by row, source before target, as networkx
  numbers the nodes of an edge list) and kept as ``g.labels`` (unicode).

Fields are separated by ``,`` (CSV) or a tab (TSV), lines by ``\\n`` or
``\\r\\n`` (a carriage return elsewhere, as in old Mac files, is an error).
Spaces (and, in CSV, tabs) around an unquoted field are not part of it; a
field may be quoted with ``"`` (RFC 4180, ``""`` for a quote), and a quoted
field is its content verbatim, spaces, delimiters and newlines included.
Blank lines are skipped. Every error names the file and the 1-based line
(and the column, for a bad value). The whole (decompressed) file is held
once; files without quotes are split by vectorised numpy passes, quoted ones
field by field with a regular expression.

:func:`compact_ids` is the one rule for numeric ids (``relabel`` and the
sparse-id warning), shared with the whitespace edge lists (``.el``, ``.wel``).
"""

from __future__ import annotations

import csv
import os
import re
import warnings

import numpy as np

from graphpar._graph import Graph, graph_from_edges, label_array
from graphpar.errors import GraphFormatError
from graphpar.io._compression import open_output, read_decompressed
from graphpar.io._text import bad_weight_message, first_bad_weight
from graphpar.io._wording import set_to, wording
from graphpar.limits import check_memory, check_vertex_count

__all__ = [
    "CSV_DELIMITERS", "read_csv_graph", "write_csv_graph", "compact_ids", "warn_labels_dropped",
    "warn_sparse_ids", "csv_header", "csv_columns", "check_nul", "split_csv_body",
    "check_ids", "parse_weights", "integer_ids", "string_ids", "decode_labels",
    "first_hit_line", "sparse_check_needed",
]

#: The field separator of each format.
CSV_DELIMITERS = {"csv": ",", "tsv": "\t"}
_SEP_NAME = {"csv": "comma", "tsv": "tab"}
_MAX_DIGITS = 19  # the digits of 2**63 - 1, the largest int64
_INT64_MAX = np.iinfo(np.int64).max
# the sparse-id warning: at least this many ids absent, and more absent than present
_SPARSE_MIN = 1000


def _show(text, limit: int = 40) -> str:
    text = str(text)
    return repr(text) if len(text) <= limit else f"{text[:limit]!r}... ({len(text)} characters)"


def bare_cr_message(name: str, line: int) -> str:
    """The message for a carriage return that does not end a line (old Mac line endings).

    Examples
    --------
    >>> print(bare_cr_message("g.csv", 3))  # doctest: +ELLIPSIS
    g.csv: line 3: a carriage return (\\r) not followed by a line feed; lines must end with ...
    """
    return (f"{name}: line {line}: a carriage return (\\r) not followed by a line feed; lines "
            "must end with \\n or \\r\\n (old Mac files end them with \\r alone: convert "
            "them, e.g. with tr '\\r' '\\n')")


# ----------------------------------------------------------------------------- header
def csv_header(buf: np.ndarray, name: str, fmt: str) -> tuple[list[str], int]:
    """The column names and the offset of the body (the byte after the header line)."""
    nl = np.flatnonzero(buf[: 1 << 20] == 10)
    end = int(nl[0]) if nl.size else (buf.size if buf.size <= 1 << 20 else -1)
    if end < 0:
        if (buf[: 1 << 20] == 13).any():
            raise GraphFormatError(bare_cr_message(name, 1))
        raise GraphFormatError(f"{name}: line 1: the header line is longer than 1 MiB "
                               "(expected column names)")
    raw = buf[:end].tobytes()
    start = 3 if raw.startswith(b"\xef\xbb\xbf") else 0  # a UTF-8 byte-order mark
    try:
        text = raw[start:].decode("utf-8").rstrip("\r")
    except UnicodeDecodeError as exc:
        raise GraphFormatError(f"{name}: line 1: not UTF-8 text (byte 0x{raw[exc.start]:02x}); "
                               "save the file as UTF-8") from None
    if not text.strip():
        what = "empty file" if buf.size == 0 else "blank first line"
        raise GraphFormatError(f"{name}: line 1: {what} (expected a header of column names, "
                               f"such as source{CSV_DELIMITERS[fmt]}target)")
    try:
        names = [c.strip() for c in next(csv.reader([text], delimiter=CSV_DELIMITERS[fmt]))]
    except csv.Error as exc:
        if "\r" in text:
            raise GraphFormatError(bare_cr_message(name, 1)) from None
        raise GraphFormatError(f"{name}: line 1: {exc}") from None
    if len(names) < 2:
        other = "tab" if fmt == "csv" and "\t" in text else (
            "comma" if fmt == "tsv" and "," in text else None)
        hint = (f"; the line holds {other}s: give format={'tsv' if other == 'tab' else 'csv'!r}"
                if other else "")
        if not other and len(text.split()) > 1:
            hint = ("; for an edge list separated by spaces, without a header, give "
                    "format='el' (or 'wel')")
        raise GraphFormatError(
            f"{name}: line 1: the header has one column ({_show(text)}); a {fmt.upper()} edge "
            f"list needs at least a source and a target column, {_SEP_NAME[fmt]}-separated"
            f"{hint}")
    for j, nm in enumerate(names):
        if nm == "":
            raise GraphFormatError(f"{name}: line 1, column {j + 1}: empty column name")
    return names, end + 1


def _column(names: list[str], want, role: str, default, name: str) -> int | None:
    """The 0-based position of the column ``want`` (a name or a position), or ``default``."""
    if want is None:
        return default
    arg = getattr(wording(), role)
    if isinstance(want, (bool, np.bool_)):
        raise TypeError(f"{arg} must be a column name or a 0-based column number, got {want!r}")
    if isinstance(want, (int, np.integer)):
        if not 0 <= int(want) < len(names):
            raise ValueError(f"{set_to(role, str(int(want)))} is not a column of {name}: it "
                             f"has {len(names)} columns")
        return int(want)
    if not isinstance(want, str):
        raise TypeError(f"{arg} must be a column name or a 0-based column number, got "
                        f"{want!r}")
    hits = [j for j, nm in enumerate(names) if nm == want]
    if not hits:
        have = ", ".join(_show(nm) for nm in names[:20])
        raise ValueError(f"{set_to(role, repr(want))} is not a column of {name} (its columns: "
                         f"{have})")
    if len(hits) > 1:
        raise ValueError(f"{set_to(role, repr(want))} names {len(hits)} columns of {name} "
                         f"(columns {', '.join(str(j + 1) for j in hits)}); rename them")
    return hits[0]


# ----------------------------------------------------------------------------- body
class _Fields:
    """The tokens of the chosen columns, one per record, and each record's file line."""

    def __init__(self, tokens: dict[int, np.ndarray], lines: np.ndarray):
        self.tokens = tokens  # column -> S or U array
        self.lines = lines  # int64, 1-based file line of each record


def _split_fast(body: np.ndarray, fmt: str, ncol: int, want: list[int], name: str,
                names: list[str], first_line: int = 2) -> _Fields:
    """Split a body without quotes by vectorised passes (delimiters and newlines).

    ``first_line`` is the file line of ``body``'s first byte (2: after the header).
    """
    delim = ord(CSV_DELIMITERS[fmt])
    size = body.size
    nl = np.flatnonzero(body == 10)
    returns = np.flatnonzero(body[:-1] == 13)  # a CR ends a line before a LF (or the end)
    bare = returns[body[returns + 1] != 10]
    if bare.size:
        line = int(np.searchsorted(nl, bare[0])) + first_line
        raise GraphFormatError(bare_cr_message(name, line))
    if size and (nl.size == 0 or nl[-1] != size - 1):
        nl = np.append(nl, size)
    ends = nl
    starts = np.zeros_like(ends)
    starts[1:] = ends[:-1] + 1
    eff = ends.copy()
    if ends.size:
        cr = (eff > starts) & (body[np.maximum(eff - 1, 0)] == 13)
        eff[cr] -= 1
    d = np.flatnonzero(body == delim)
    check_memory(8 * (d.size + 8 * ends.size) + 3 * size, what="splitting the CSV file",
                 source=name)
    after = np.searchsorted(d, ends)  # delimiters before each line end
    before = np.zeros_like(after)
    before[1:] = after[:-1]
    bad = (after - before) != ncol - 1
    keep = slice(None)
    if bad.any():
        blank = eff == starts
        for k in np.flatnonzero(bad & ~blank):
            if body[starts[k]:eff[k]].tobytes().strip():
                found = int(after[k] - before[k]) + 1
                raise GraphFormatError(
                    f"{name}: line {int(k) + first_line}: expected {ncol} "
                    f"{_SEP_NAME[fmt]}-separated fields (as in the header), found {found}")
            blank[k] = True
        keep = ~blank
        starts, eff, before = starts[keep], eff[keep], before[keep]
    lines = (np.flatnonzero(keep) if not isinstance(keep, slice)
             else np.arange(ends.size)).astype(np.int64) + first_line
    tokens = {}
    for j in want:
        s = starts if j == 0 else d[before + j - 1] + 1
        e = d[before + j] if j < ncol - 1 else eff
        s, e = _strip(body, s, e)
        tokens[j] = _token_array(body, s, e, name, names[j])
    return _Fields(tokens, lines)


def _strip(body: np.ndarray, s: np.ndarray, e: np.ndarray):
    """Move ``[s, e)`` past spaces and tabs at both ends (a few vectorised passes)."""
    last = max(body.size - 1, 0)
    while True:
        c = body[np.minimum(s, last)]
        more = (s < e) & ((c == 32) | (c == 9))
        if not more.any():
            break
        s = s + more
    while True:
        c = body[np.clip(e - 1, 0, last)]
        more = (e > s) & ((c == 32) | (c == 9))
        if not more.any():
            break
        e = e - more
    return s, e


def _token_array(body: np.ndarray, s: np.ndarray, e: np.ndarray, name: str,
                 column: str) -> np.ndarray:
    """The tokens ``body[s:e]`` as a fixed-width bytes array (``S<width>``)."""
    width = e - s
    top = int(width.max()) if width.size else 1
    top = max(top, 1)
    check_memory(width.size * top, what=f"the column {_show(column)} ({width.size} fields of "
                 f"up to {top} bytes)", source=name)
    mat = np.zeros((width.size, top), dtype=np.uint8)
    for k in range(top):
        sel = np.flatnonzero(width > k)
        mat[sel, k] = body[s[sel] + k]
    return mat.view(f"S{top}").reshape(-1)


def _field_pattern(delim: str) -> re.Pattern:
    """One field and what ends it: group 1 a quoted field's content, 2 an unquoted one's, 3 the end.

    Spaces (and tabs, in CSV) around a field are not part of it; a quoted
    field is its content between the quotes, verbatim (``""`` a quote); an
    unquoted one ends at the delimiter or the line end and may hold quotes
    after its first character. The end is the delimiter, ``\\n`` or
    ``\\r\\n``, or the end of the text.
    """
    d = re.escape(delim)
    space = " " if delim == "\t" else " \t"
    first = f'[^"{d}\r\n{space}]'  # an unquoted field's first character
    inner, last = f"[^{d}\r\n]", f"[^{d}\r\n{space}]"
    return re.compile(f'[{space}]*(?:"([^"]*(?:""[^"]*)*)"|({first}(?:{inner}*{last})?)?)'
                      f'[{space}]*({d}|\r?\n|\r?\\Z)')


def _fields(text: str, delim: str):
    """Yield ``(value, quoted, end, next)`` for each field of ``text`` from its start.

    ``value`` is the field by :func:`_field_pattern`'s rules (a quoted one
    verbatim, ``""`` a quote), ``quoted`` the raw text between its quotes or
    None, ``end`` what ended it and ``next`` where the next field starts. Stops
    where no field starts: the caller compares the last ``next`` with
    ``len(text)``.
    """
    pos = 0
    for m in _field_pattern(delim).finditer(text):
        if m.start() != pos:
            return
        pos = m.end()
        quoted, value, end = m.groups()
        if quoted is None:
            yield value or "", None, end, pos
        else:
            yield quoted.replace('""', '"'), quoted, end, pos


def _split_quoted(body: np.ndarray, fmt: str, ncol: int, want: list[int], name: str) -> _Fields:
    """Split a body with quoted fields (RFC 4180): a quoted field keeps its content verbatim.

    Unquoted fields are trimmed as by :func:`_split_fast`. Errors (a quote
    never closed, text after a closing quote, a bare carriage return, a
    wrong number of fields) name the file line.
    """
    raw = body.tobytes()
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 2
        raise GraphFormatError(f"{name}: line {line}: not UTF-8 text (byte "
                               f"0x{raw[exc.start]:02x}); save the file as UTF-8") from None
    del raw
    delim = CSV_DELIMITERS[fmt]
    cols: dict[int, list[str]] = {j: [] for j in want}
    lines: list[int] = []
    row: list[str] = []
    pos = 0  # where the next field starts
    line = first = 2  # the file line at pos, and the line where the record starts
    for value, quoted, end, pos in _fields(text, delim):  # noqa: B007 (pos read after)
        if quoted is not None:
            line += quoted.count("\n")
        row.append(value)
        if end == delim:
            continue
        if len(row) > 1 or quoted is not None or value:  # else a blank line
            if len(row) != ncol:
                raise GraphFormatError(
                    f"{name}: line {first}: expected {ncol} {_SEP_NAME[fmt]}-separated fields "
                    f"(as in the header), found {len(row)}")
            for j in want:
                cols[j].append(row[j])
            lines.append(first)
        row = []
        line += 1
        first = line
    if pos < len(text):
        raise GraphFormatError(_field_error(text, pos, line, name, delim))
    tokens = {j: np.array(v, dtype=str) if v else np.empty(0, dtype="U1")
              for j, v in cols.items()}
    return _Fields(tokens, np.array(lines, dtype=np.int64))


def split_row(text: str, delim: str = ",") -> list[str]:
    """One CSV row's fields by the reader's rules: a quoted field verbatim, others trimmed.

    Raises ``ValueError`` for a row those rules cannot read (a quote never closed).

    Examples
    --------
    >>> split_row('" Rome", Pisa,"a, b"')
    [' Rome', 'Pisa', 'a, b']
    """
    out, pos = [], 0
    for value, _, end, pos in _fields(text, delim):  # noqa: B007 (pos read after)
        out.append(value)
        if end != delim:
            break
    if pos < len(text):
        raise ValueError(f"cannot read {text!r} as comma-separated fields: a field that opens "
                         "a quote must close it, and nothing may follow a closing quote but "
                         "a comma")
    return out


def _field_error(text: str, pos: int, line: int, name: str, delim: str) -> str:
    """Why no field starts at ``text[pos]`` (on file line ``line``)."""
    rest = text[pos:].lstrip(" \t" if delim != "\t" else " ")
    if rest.startswith('"'):
        quoted = re.match(r'"[^"]*(?:""[^"]*)*"', rest)
        if quoted is None:
            return (f"{name}: line {line}: a field opens a quote (\") that is never closed; "
                    "a quote inside a quoted field is written twice (\"\")")
        line += quoted.group().count("\n")
        after = rest[quoted.end():].lstrip(" \t" if delim != "\t" else " ")[:1]
        if after != "\r":
            sep = "a comma" if delim == "," else "a tab"
            return (f"{name}: line {line}: expected {sep} or the end of the line after the "
                    f"closing quote of a field, got {after!r}; a quote inside a quoted field "
                    "is written twice (\"\")")
    return bare_cr_message(name, line)


def check_ids(tok: np.ndarray, lines: np.ndarray, name: str, column: str, what: str):
    empty = np.char.str_len(tok) == 0
    if empty.any():
        k = int(np.argmax(empty))
        raise GraphFormatError(f"{name}: line {int(lines[k])}, column {_show(column)}: empty "
                               f"{what}")


def integer_ids(tok: np.ndarray) -> np.ndarray | None:
    """The tokens as int64 when every one is a vertex number, else None.

    A vertex number is a non-negative integer in canonical form (``0``, or
    digits without a leading zero) of at most ``2**63 - 1``: ``7`` is one,
    ``007``, ``+7``, ``7.0`` and ``9223372036854775808`` are not. One token
    that is not makes every id of the file a string label, so that ``007``
    and ``7`` never merge. Empty tokens are refused before (:func:`check_ids`).

    Examples
    --------
    >>> integer_ids(np.array([b"7", b"0", b"9223372036854775807"]))
    array([                  7,                   0, 9223372036854775807])
    >>> integer_ids(np.array([b"7", b"007"])) is None
    True
    """
    if tok.dtype.kind == "U":
        try:
            tok = np.char.encode(tok, "ascii")
        except UnicodeEncodeError:
            return None
    width = tok.dtype.itemsize
    if width > _MAX_DIGITS or tok.size == 0:
        return None if width > _MAX_DIGITS else np.zeros(0, dtype=np.int64)
    mat = np.ascontiguousarray(tok).view(np.uint8).reshape(tok.size, width)
    length = np.char.str_len(tok)
    pad = np.arange(width) >= length[:, None]
    if not (((mat >= 48) & (mat <= 57)) | pad).all():
        return None
    if ((mat[:, 0] == 48) & (length > 1)).any():  # a leading zero
        return None
    val = np.zeros(tok.size, dtype=np.uint64)  # 19 digits fit: 10**19 - 1 < 2**64
    for k in range(width):
        digit = mat[:, k].astype(np.uint64) - np.uint64(48)
        val = np.where(length > k, val * np.uint64(10) + digit, val)
    if (val > np.uint64(_INT64_MAX)).any():
        return None
    return val.astype(np.int64)


def parse_weights(tok: np.ndarray, lines: np.ndarray, name: str, column: str,
             rule: str, chosen: bool = False) -> np.ndarray:
    """Parse the weight tokens; errors name the line, the column and the token."""
    check_ids(tok, lines, name, column, "weight (every edge needs one)")
    w = None
    if not (tok.dtype.kind == "S" and (tok.view(np.uint8) == ord("_")).any()):
        try:
            w = tok.astype(np.float64)
        except ValueError:
            w = None
    if w is None:  # find the first token that is not a number
        for k, x in enumerate(tok.tolist()):
            t = x.decode("utf-8", "replace") if isinstance(x, bytes) else x
            try:
                if "_" in t or not t.isascii():
                    raise ValueError
                float(t)
            except ValueError:
                hint = (f"; it was taken as the weight column by default: "
                        f"{wording().unweighted}") if chosen else ""
                raise GraphFormatError(
                    f"{name}: line {int(lines[k])}, column {_show(column)}: expected a number "
                    f"(the edge weight), got {_show(t)}{hint}") from None
    k, code = first_bad_weight(w, rule)
    if k >= 0:
        t = tok[k]
        t = t.decode("utf-8", "replace") if isinstance(t, bytes) else str(t)
        raise GraphFormatError(f"{name}: line {int(lines[k])}, column {_show(column)}: "
                               f"{bad_weight_message(code, t, 'the edge of this line')}")
    return w


def decode_labels(labels: np.ndarray, codes: np.ndarray, lines: np.ndarray,
                   name: str) -> np.ndarray:
    if labels.dtype.kind != "S":
        return labels
    try:
        return np.char.decode(labels, "utf-8")
    except UnicodeDecodeError:
        for i, x in enumerate(labels.tolist()):
            try:
                x.decode("utf-8")
            except UnicodeDecodeError:
                k = int(np.argmax(codes == i))
                raise GraphFormatError(f"{name}: line {int(lines[k // 2])}: the id {x!r} is "
                                       "not UTF-8 text; save the file as UTF-8") from None
        raise  # pragma: no cover - some label failed above


def string_ids(src: np.ndarray, dst: np.ndarray):
    """Codes and labels of string ids, numbered in order of first appearance (source first)."""
    both_w = max(src.dtype.itemsize, dst.dtype.itemsize)
    kind = src.dtype.kind
    if kind == "U":
        both_w //= 4
    both = np.empty(2 * src.size, dtype=f"{kind}{max(both_w, 1)}")
    both[0::2], both[1::2] = src, dst
    uniq, first, inv = np.unique(both, return_index=True, return_inverse=True)
    perm = np.argsort(first, kind="stable")
    rank = np.empty(perm.size, dtype=np.int64)
    rank[perm] = np.arange(perm.size, dtype=np.int64)
    codes = rank[inv.reshape(-1)]
    return codes, uniq[perm]


def csv_columns(names: list[str], source, target, weight, name: str):
    """The 0-based columns ``(source, target, weight or None)`` chosen in a header.

    The rules of :func:`read_csv_graph` (defaults: the first two columns; the
    column named ``weight``, else the third of exactly three; ``weight=False``
    none). A name or position that is not a column raises ``ValueError``.

    Examples
    --------
    >>> csv_columns(["from", "to", "km"], None, None, None, "roads.csv")
    (0, 1, 2)
    >>> csv_columns(["a", "b", "weight", "x"], "b", "a", False, "roads.csv")
    (1, 0, None)
    """
    ncol = len(names)
    js = _column(names, source, "source", 0, name)
    jt = _column(names, target, "target", 1, name)
    named = [j for j, nm in enumerate(names) if nm.lower() == "weight"]
    auto = named[0] if len(named) == 1 else (2 if ncol == 3 and not named else None)
    jw = None if weight is False else _column(names, weight, "weight", auto, name)
    if weight is None and jw in (js, jt):
        jw = None
    if js == jt:
        w = wording()
        raise ValueError(f"{w.source} and {w.target} are the same column ({_show(names[js])}) "
                         f"of {name}")
    return js, jt, jw


def check_nul(body: np.ndarray, name: str, first_line: int = 2) -> None:
    """Refuse a NUL byte in ``body`` (whose first byte is on file line ``first_line``).

    Examples
    --------
    >>> check_nul(np.frombuffer(b"a,b\\n\\x00", np.uint8), "g.csv")
    Traceback (most recent call last):
    ...
    graphpar.errors.GraphFormatError: g.csv: line 3: a NUL byte (not a text file?)
    """
    nul = np.flatnonzero(body == 0)
    if nul.size:
        line = int(np.count_nonzero(body[: nul[0]] == 10)) + first_line
        raise GraphFormatError(f"{name}: line {line}: a NUL byte (not a text file?)")


def split_csv_body(body: np.ndarray, fmt: str, names: list[str], columns, name: str,
                   first_line: int = 2):
    """Split lines of a body without quotes into the tokens of ``columns``.

    Returns an object with ``tokens`` (column -> bytes array, one token per
    record, spaces stripped) and ``lines`` (each record's 1-based file line,
    counted from ``first_line``, the line of ``body[0]``). A line with another
    number of fields than the header raises :class:`GraphFormatError` naming
    it; blank lines are skipped. The body must hold whole lines.

    Examples
    --------
    >>> f = split_csv_body(np.frombuffer(b"Rome,Pisa,3\\n\\nPisa,Bari,4\\n", np.uint8), "csv",
    ...                    ["from", "to", "km"], (0, 1, None), "roads.csv", first_line=7)
    >>> f.tokens[1], f.lines
    (array([b'Pisa', b'Bari'], dtype='|S4'), array([7, 9]))
    """
    want = sorted({j for j in columns if j is not None})
    return _split_fast(body, fmt, len(names), want, name, names, first_line)


def first_hit_line(src: np.ndarray, dst: np.ndarray, lines: np.ndarray, vertex: int) -> int:
    """The file line of the first record that holds ``vertex`` (0 when none does).

    Examples
    --------
    >>> first_hit_line(np.array([0, 5]), np.array([1, 2]), np.array([2, 4]), 5)
    4
    """
    hit = (src == vertex) | (dst == vertex)
    return int(lines[int(np.argmax(hit))]) if hit.any() else 0


def read_csv_graph(path, comp: str | None, fmt: str, *, directed: bool | None = None,
                   weights: str = "any", source=None, target=None, weight=None,
                   relabel: bool = False, progress: bool | None = False) -> Graph:
    """Read a CSV (``fmt="csv"``) or TSV (``"tsv"``) edge list with a header of column names.

    The arguments are those of :func:`graphpar.io.read_graph` (``comp`` the
    compression suffix or None); see the module docstring for the rules.

    Examples
    --------
    >>> import os, tempfile
    >>> f = os.path.join(tempfile.mkdtemp(), "roads.csv")
    >>> _ = open(f, "w").write("from,to,km\\nRome,Florence,273.5\\nFlorence,Pisa,85.2\\n")
    >>> g = read_csv_graph(f, None, "csv", source="from", target="to", weight="km")
    >>> g.labels, g.weights
    (array(['Rome', 'Florence', 'Pisa'], dtype='<U8'), array([273.5,  85.2]))
    >>> read_csv_graph(f, None, "csv", weight="miles")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: weight='miles' is not a column of .../roads.csv (its columns: 'from', 'to', 'km')
    """
    name = os.fspath(path)
    buf = read_decompressed(path, comp, progress=progress)
    names, offset = csv_header(buf, name, fmt)
    js, jt, jw = csv_columns(names, source, target, weight, name)
    body = buf[offset:]
    check_nul(body, name)
    if (body == ord('"')).any():
        want = sorted({js, jt} | ({jw} if jw is not None else set()))
        fields = _split_quoted(body, fmt, len(names), want, name)
    else:
        fields = split_csv_body(body, fmt, names, (js, jt, jw), name)
    del buf, body
    lines = fields.lines
    src_tok, dst_tok = fields.tokens[js], fields.tokens[jt]
    check_ids(src_tok, lines, name, names[js], "source id")
    check_ids(dst_tok, lines, name, names[jt], "target id")
    m = src_tok.size
    w = np.ones(m) if jw is None else parse_weights(fields.tokens[jw], lines, name, names[jw],
                                                    weights, chosen=weight is None)
    src, dst = integer_ids(src_tok), integer_ids(dst_tok)
    labels = None
    if src is not None and dst is not None:
        top = int(max(src.max(initial=-1), dst.max(initial=-1))) + 1
        if not relabel and top > 0:
            check_vertex_count(top, edges=m,
                               source=f"{name}: line {first_hit_line(src, dst, lines, top - 1)}",
                               what=f"has vertex id {top - 1}, so needs",
                               renumber_hint=wording().renumber_hint)
        src, dst, n, labels = compact_ids(src, dst, top, relabel=relabel, path=name,
                                          stacklevel=4)
    else:
        codes, labels = string_ids(src_tok, dst_tok)
        labels = decode_labels(labels, codes, lines, name)
        labels = label_array(labels)
        src, dst, n = codes[0::2], codes[1::2], labels.size
    del fields, src_tok, dst_tok
    try:
        return graph_from_edges(src, dst, w, n, directed is not False, labels=labels)
    except MemoryError:
        raise MemoryError(f"{name}: the graph has {n} vertices and {m} edges, more than this "
                          "machine can hold") from None


# ----------------------------------------------------------------------------- numeric ids
def compact_ids(src: np.ndarray, dst: np.ndarray, n: int, *, relabel: bool, path: str,
                declared: int | None = None, stacklevel: int = 3):
    """The one rule for numeric vertex ids: ``(src, dst, n, labels)``.

    With ``relabel`` the ids present are numbered ``0 .. k-1`` in increasing
    order and returned as ``labels`` (int64, ``labels[i]`` the id of vertex
    ``i``). Otherwise the ids are the vertex numbers (``labels`` None), and a
    graph whose ``n`` vertices are mostly absent from every edge (more absent
    than present, and at least 1000) gets a ``UserWarning`` that suggests
    ``relabel=True``, unless the file declared ``n`` itself (``declared``).

    Examples
    --------
    >>> import numpy as np
    >>> src, dst, n, labels = compact_ids(np.array([1000000]), np.array([2000000]), 2000001,
    ...                                   relabel=True, path="x.el")
    >>> src, dst, n, labels
    (array([0]), array([1]), 2, array([1000000, 2000000]))
    """
    if relabel:
        both = np.concatenate([src, dst])
        labels, inv = np.unique(both, return_inverse=True)
        inv = inv.reshape(-1).astype(np.int64, copy=False)
        return inv[: src.size], inv[src.size:], int(labels.size), labels.astype(np.int64)
    if sparse_check_needed(n, declared):
        present = np.zeros(n, dtype=bool)
        present[src] = True
        present[dst] = True
        warn_sparse_ids(n, int(np.count_nonzero(present)), path, stacklevel=stacklevel)
    return src, dst, int(n), None


def sparse_check_needed(n: int, declared: int | None = None) -> bool:
    """Whether :func:`warn_sparse_ids` may apply: more than 1000 vertices, not declared.

    Examples
    --------
    >>> sparse_check_needed(10), sparse_check_needed(10**6), sparse_check_needed(10**6, 10**6)
    (False, True, False)
    """
    return n > _SPARSE_MIN and (declared is None or declared < n)


def warn_sparse_ids(n: int, k: int, path, stacklevel: int = 2) -> None:
    """Warn that only ``k`` of ``n`` vertex ids appear, when most are absent; suggest relabel.

    The rule of :func:`compact_ids`: at least 1000 ids absent, and more
    absent than present.

    Examples
    --------
    >>> warn_sparse_ids(10, 9, "x.el")  # nothing to say
    """
    if n - k > max(k, _SPARSE_MIN):
        warnings.warn(
            f"{path}: the largest vertex id is {n - 1} but only {k} distinct ids appear "
            f"in the edges, so the graph has {n} vertices, {n - k} of them in no edge; "
            f"{wording().read_relabelled} to number the ids present 0 to {k - 1} "
            f"({wording().labels_kept})", UserWarning, stacklevel=stacklevel + 1)


# ----------------------------------------------------------------------------- writer
def warn_labels_dropped(g: Graph, fmt: str, path, stacklevel: int = 3) -> None:
    """Warn that a format without labels writes a labelled graph's vertex numbers only.

    Integer labels ``0 .. n-1`` in order are the vertex numbers: no warning.

    Examples
    --------
    >>> warn_labels_dropped(Graph.from_edges([0], [1], labels=[0, 1]), "gr", "g.gr")
    """
    labels = g.labels
    if labels is None or (labels.dtype.kind in "iu"
                          and np.array_equal(labels, np.arange(g.n))):
        return
    warnings.warn(f"{os.fspath(path)}: a {fmt!r} file has no vertex labels: the graph's "
                  "labels are not written, only the vertex numbers (write .csv or .npz to "
                  "keep them)", UserWarning, stacklevel=stacklevel)


def quote_field(text: str, delim: str = ",") -> str:
    """``text`` as one CSV field that :func:`split_row` and the reader give back verbatim.

    Examples
    --------
    >>> quote_field(" Rome"), quote_field("Pisa"), quote_field('a "b", c')
    ('" Rome"', 'Pisa', '"a ""b"", c"')
    """
    if any(c in text for c in (delim, '"', "\n", "\r")) or text != text.strip():
        return '"' + text.replace('"', '""') + '"'
    return text


def _check_every_vertex_written(g: Graph, rows: np.ndarray, name: str) -> None:
    """Refuse a graph with a vertex the edge list would not give back (one in no edge)."""
    used = np.zeros(g.n, dtype=bool)
    used[rows] = True
    used[g.indices] = True
    if g.labels is not None and not used.all():
        k = int(np.argmin(used))
        raise ValueError(f"{name}: vertex {k} ({g.label_of(k)!r}) is in no edge; a CSV file "
                         "lists edges only, so it would read back without this vertex (write "
                         ".npz to keep every vertex)")
    if g.labels is None and g.n and not used[-1]:
        k = int(np.flatnonzero(used)[-1]) + 1 if used.any() else 0
        raise ValueError(f"{name}: vertex {k} is in no edge, nor is any vertex above it; a CSV "
                         f"file lists edges only, so it would read back with {k} vertices "
                         f"instead of {g.n} (write .npz to keep every vertex)")


def _check_labels_read_back(labels: np.ndarray, text: list[str], name: str) -> None:
    """Refuse labels that the reader would not give back: all vertex numbers, or written alike."""
    seen: dict[str, int] = {}
    for i, t in enumerate(text):
        j = seen.setdefault(t, i)
        if j != i:
            raise ValueError(f"{name}: vertices {j} and {i} are both written as {t!r} (labels "
                             f"{labels[j]!r} and {labels[i]!r}), so a CSV file would merge "
                             "them; give them distinct labels")
    if text and integer_ids(np.array(text)) is not None:
        shown = ", ".join(repr(t) for t in text[:3]) + (", ..." if len(text) > 3 else "")
        raise ValueError(f"{name}: every label is an integer in canonical form ({shown}), so "
                         "read_graph would read them as vertex numbers, not labels, and give "
                         "back another graph (write .npz to keep the labels)")


def write_csv_graph(g: Graph, path, fmt: str) -> None:
    """Write a graph as a CSV/TSV edge list: ``source,target,weight``, one edge per line.

    Vertices are written as their labels (quoted when needed) or, unlabelled,
    as their numbers; weights in Python's shortest round-trip form, so that
    :func:`graphpar.io.read_graph` gives back the same edges, weights and
    labels (a labelled graph's vertices numbered as the reader numbers them:
    string labels in order of first appearance). An undirected graph is
    written with each edge once (``u <= v``): read it back with
    ``directed=False``. An integer-labelled graph reads back with
    ``relabel=True``.

    A graph that would read back otherwise raises ``ValueError`` and writes
    nothing: a vertex in no edge (of a labelled graph; of an unlabelled one,
    the vertices above the largest in an edge), string labels that are all
    vertex numbers (``"1"``, ``"2"``: they would read back as numbers), and
    labels written alike (``1`` and ``"1"``). ``.npz`` files keep such graphs.

    Examples
    --------
    >>> import os, tempfile
    >>> g = Graph.from_edges([0, 1], [1, 2], [2.5, 1.0], labels=["a", "b,c", "d"])
    >>> f = os.path.join(tempfile.mkdtemp(), "g.csv")
    >>> write_csv_graph(g, f, "csv")
    >>> print(open(f).read())
    source,target,weight
    a,"b,c",2.5
    "b,c",d,1.0
    <BLANKLINE>
    """
    delim = CSV_DELIMITERS[fmt]
    name = os.fspath(path)
    rows, cols, w = g.row_ids(), g.indices, g.weights
    _check_every_vertex_written(g, rows, name)
    if not g.directed:
        keep = rows <= cols
        rows, cols, w = rows[keep], cols[keep], w[keep]
    labels = g.labels
    if labels is not None and labels.dtype.kind in "iu" and (labels >= 0).all():
        rows, cols, labels = labels[rows], labels[cols], None  # ids as numbers
    if labels is None:
        from graphpar.io._text import format_records

        body = format_records(b"", rows, cols, w, 0, True)
        body = body.replace(b" ", delim.encode())
    else:
        if labels.dtype.kind == "f":
            text = [repr(float(x)) for x in labels.tolist()]
        else:
            text = [str(x) for x in labels.tolist()]
        if any(t == "" for t in text):
            raise ValueError(f"{name}: a vertex label is the empty string, which a CSV file "
                             "cannot hold")
        _check_labels_read_back(labels, text, name)
        if labels.dtype.kind != "U":
            warnings.warn(f"{name}: the labels ({labels.dtype} array) are written as text and "
                          "read back as string labels", UserWarning, stacklevel=3)
        text = [quote_field(t, delim) for t in text]
        wt = [repr(x) for x in w.tolist()]
        body = "".join(f"{text[u]}{delim}{text[v]}{delim}{x}\n" for u, v, x in
                       zip(rows.tolist(), cols.tolist(), wt, strict=True)).encode("utf-8")
    with open_output(path) as f:
        f.write(f"source{delim}target{delim}weight\n".encode())
        f.write(body)
