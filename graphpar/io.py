"""Reading and writing graph files: DIMACS ``.gr``, Matrix Market, edge lists and ``.npz``.

====================  ======================  =======  ===============================
format (``format=``)  suffixes                ids      default ``directed``
====================  ======================  =======  ===============================
``"gr"``              ``.gr``                 1-based  True (arcs)
``"mtx"``             ``.mtx``, ``.mm``       1-based  False for ``symmetric`` files
``"el"``              ``.el``, ``.txt``       0-based  False if a leading comment says
                                                       ``Undirected graph``, else True
``"wel"``             ``.wel``                0-based  as ``"el"``
``"npz"``             ``.npz``                CSR      as stored
====================  ======================  =======  ===============================

A ``.gz``, ``.bz2`` or ``.xz`` suffix after any of these is decompressed
transparently on reading and compresses on writing. Text files are parsed by
a Numba byte scanner (:mod:`graphpar.kernels.parse`); the building blocks that
a distributed reader needs (header, body slices, error lines) are in
:mod:`graphpar.io_text`.
"""

from __future__ import annotations

import bz2
import contextlib
import gzip
import io as _pyio
import lzma
import os
import zipfile
import zlib
from pathlib import Path

import numpy as np

from graphpar.errors import LimitError
from graphpar.graph import Graph, graph_from_edges
from graphpar.io_errors import GraphFormatError
from graphpar.io_text import (
    WEIGHT_RULES,
    bad_weight_message,
    body_error,
    count_error,
    first_bad_weight,
    format_records,
    parse_body,
    parse_header,
    vertex_count_error,
    weight_error,
)
from graphpar.kernels import csr as _csr
from graphpar.limits import ENV_MAX_DECOMPRESSED, check_memory, decompression_limit

__all__ = [
    "GraphFormatError", "LimitError", "read_graph", "write_graph", "detect_format",
    "open_binary", "iter_decompressed", "decompression_errors",
]

NPZ_VERSION = 1
_SUFFIX = {
    ".gr": "gr", ".mtx": "mtx", ".mm": "mtx", ".el": "el", ".txt": "el", ".wel": "wel",
    ".npz": "npz",
}
_ALIASES = {
    "gr": "gr", "dimacs": "gr", "mtx": "mtx", "mm": "mtx", "matrixmarket": "mtx",
    "el": "el", "txt": "el", "edgelist": "el", "snap": "el", "wel": "wel", "npz": "npz",
}
_COMPRESSORS = {".gz": gzip, ".bz2": bz2, ".xz": lzma}


def detect_format(path, format: str | None = None) -> tuple[str, str | None]:
    """Return ``(format, compression)`` for a path, from ``format=`` or its suffixes.

    Parameters
    ----------
    path : str or path-like
    format : str, optional
        One of ``gr`` (alias ``dimacs``), ``mtx`` (``mm``, ``matrixmarket``),
        ``el`` (``txt``, ``edgelist``, ``snap``), ``wel``, ``npz``. Default: from
        the suffix before any ``.gz``/``.bz2``/``.xz``.

    Raises
    ------
    ValueError
        For an unknown format name or suffix.

    Examples
    --------
    >>> detect_format("roads.gr.gz")
    ('gr', '.gz')
    >>> detect_format("edges.csv", "el")
    ('el', None)
    """
    p = Path(os.fspath(path))
    suffixes = [s.lower() for s in p.suffixes]
    comp = suffixes[-1] if suffixes and suffixes[-1] in _COMPRESSORS else None
    if format is not None:
        key = str(format).lower().lstrip(".")
        if key not in _ALIASES:
            raise ValueError(
                f"format must be one of {sorted(set(_ALIASES))}, got {format!r}"
            )
        return _ALIASES[key], comp
    rest = suffixes[:-1] if comp else suffixes
    if rest and rest[-1] in _SUFFIX:
        return _SUFFIX[rest[-1]], comp
    known = ", ".join(sorted(_SUFFIX))
    raise ValueError(
        f"cannot tell the graph format of {str(path)!r} from its suffix: expected one of "
        f"{known} (optionally followed by .gz, .bz2 or .xz), or give the format"
    )


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
    mod = _COMPRESSORS.get(suffix)
    if mod is None:
        return open(path, mode)
    if mod is gzip and "w" in mode:
        return gzip.open(path, mode, compresslevel=6)  # gzip's own default; 9 is far slower
    return mod.open(path, mode)


_PIECE = 1 << 20


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


def iter_decompressed(path, piece: int = _PIECE):
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
    limit = decompression_limit(size) if comp in _COMPRESSORS else None
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


def _read_bytes(path, comp) -> np.ndarray:
    if comp is None:
        return np.fromfile(path, dtype=np.uint8)
    data = bytearray()
    for piece in iter_decompressed(path):
        data += piece
    return np.frombuffer(data, dtype=np.uint8)


def read_graph(
    path, format: str | None = None, *, directed: bool | None = None, weights: str = "any"
) -> Graph:
    """Read a graph file.

    Parameters
    ----------
    path : str or path-like
        The file. A ``.gz``, ``.bz2`` or ``.xz`` suffix is decompressed.
    format : str, optional
        ``"gr"``, ``"mtx"``, ``"el"``, ``"wel"`` or ``"npz"`` (see
        :func:`detect_format`); default from the suffix.
    directed : bool, optional
        ``None`` keeps the file's own meaning: DIMACS arcs are directed; a
        Matrix Market ``symmetric`` file is undirected (``general`` directed);
        an edge list is directed unless a leading comment says ``Undirected
        graph`` (SNAP's header); ``.npz`` keeps what was stored (after checking
        that a graph stored as undirected holds every edge both ways).
        ``False`` stores every edge both ways. ``True`` keeps the edges as
        listed (a symmetric Matrix Market file still gives both ``(i, j)`` and
        ``(j, i)``).
    weights : {"any", "nonnegative", "finite"}
        Which weights the file may hold, as :func:`graphpar.validate_graph`'s
        rule: a NaN weight is always an error; ``"any"`` (the default) reads
        negative and infinite weights and leaves them to the method that uses
        the graph; ``"nonnegative"`` refuses negative ones and ``"finite"``
        negative and infinite ones, naming the file and the line (or, for
        ``.npz``, the stored edge) -- what a caller who will search shortest
        paths should ask for.

    Returns
    -------
    Graph
        Rows sorted, duplicate edges collapsed to their smallest weight (text
        formats); an ``.npz`` file gives back exactly the stored arrays. Edges
        without a weight column (Matrix Market ``pattern``, two-column edge
        lists) weigh 1. An edge list has ``n = max(id) + 1``, or the ``Nodes:``
        count of a SNAP header comment when larger.

    Raises
    ------
    GraphFormatError
        (a ``ValueError``) for a malformed file, naming the file, the line and
        what was expected: missing or bad header, truncated file, counts that
        disagree with the header, vertex ids out of range, non-numeric tokens,
        NaN weights (and weights ``weights=`` refuses), corrupt compressed
        data, ``.npz`` arrays of the wrong kind or shape, stored metadata that
        disagrees with the arrays.
    LimitError
        (a ``ValueError``) when the file declares more than graphpar allocates
        for it: more vertices than its edges reach beyond
        ``GRAPHPAR_MAX_VERTICES``, a compressed file or ``.npz`` member that
        expands beyond ``GRAPHPAR_MAX_DECOMPRESSED`` (see
        :mod:`graphpar.limits`). The message names the file, the number and
        the variable that raises the limit.
    OSError
        When the file cannot be read.

    Examples
    --------
    >>> import os, tempfile
    >>> f = os.path.join(tempfile.mkdtemp(), "tiny.gr")
    >>> _ = open(f, "w").write("c tiny\\np sp 3 2\\na 1 2 4\\na 2 3 -1\\n")
    >>> g = read_graph(f)
    >>> g.n, g.nnz, g.to_scipy().toarray()[0]
    (3, 2, array([0., 4., 0.]))
    >>> read_graph(f, weights="nonnegative")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    graphpar.errors.GraphFormatError: .../tiny.gr: line 4: negative edge weight -1 in arc 2 3 ...
    """
    fmt, comp = detect_format(path, format)
    if directed is not None and not isinstance(directed, (bool, np.bool_)):
        raise TypeError(f"directed must be True, False or None, got {directed!r}")
    if weights not in WEIGHT_RULES:
        raise ValueError(f"weights must be one of {', '.join(WEIGHT_RULES)}, got {weights!r}")
    if fmt == "npz":
        return _read_npz(path, comp, directed, weights)
    name = os.fspath(path)
    buf = _read_bytes(path, comp)
    header = _header_of(buf, fmt, name)
    body = buf[header.body_offset:]
    parsed = parse_body(body, header, max_records=header.m)
    if parsed.error is not None:
        raise body_error(body, header, parsed.error, path=name)
    src, dst, w = parsed.src, parsed.dst, parsed.weights
    if header.m is not None and src.size != header.m:
        raise count_error(body, header, src.size, path=name)
    err = weight_error(body, header, parsed, weights, path=name)
    if err is not None:
        raise err
    top = int(max(src.max(initial=-1), dst.max(initial=-1))) + 1
    n = graph_order(header, top)
    err = vertex_count_error(body, header, parsed, n, top, src.size, path=name)
    if err is not None:
        raise err
    undirected = (not header.directed) if directed is None else (not directed)
    if header.symmetric and not undirected:
        src, dst = np.concatenate([src, dst]), np.concatenate([dst, src])
        w = np.concatenate([w, w])
    try:
        return graph_from_edges(src, dst, w, n, not undirected)
    except MemoryError:
        raise MemoryError(
            f"{name}: the graph has {n} vertices and {src.size} edges, more than this "
            "machine can hold"
        ) from None


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


def _header_of(buf: np.ndarray, fmt: str, name: str):
    """Parse the header from a growing prefix of ``buf`` (never copying the whole file)."""
    size = 1 << 16
    while True:
        eof = size >= buf.size
        try:
            return parse_header(buf[:size], fmt, eof=eof, path=name)
        except EOFError:
            size *= 4


_NPZ_KEYS = ("indptr", "indices", "weights", "n", "directed", "format_version")
# what each stored array must be: dtype kinds and number of dimensions (0: a scalar)
_NPZ_SPEC = {
    "indptr": ("iu", 1, "integers"), "indices": ("iu", 1, "integers"),
    "weights": ("iuf", 1, "real numbers"), "n": ("iu", 0, "an integer"),
    "directed": ("b", 0, "a boolean"), "format_version": ("iu", 0, "an integer"),
}
_ZIP_ERRORS = (
    zipfile.BadZipFile, zipfile.LargeZipFile, EOFError, zlib.error, lzma.LZMAError,
    NotImplementedError, RuntimeError,  # unsupported compression; an encrypted member
)


def _read_npz(path, comp, directed, rule) -> Graph:
    name = os.fspath(path)
    if comp is None:
        with open(path, "rb") as f:
            arrays = _npz_arrays(f, name, os.fstat(f.fileno()).st_size)
    else:
        data = _read_bytes(path, comp)
        arrays = _npz_arrays(_pyio.BytesIO(data), name, data.size)
    version = int(arrays["format_version"][()])
    if version > NPZ_VERSION:
        raise GraphFormatError(
            f"{name}: .npz graph format version {version} is newer than this "
            f"graphpar reads ({NPZ_VERSION})"
        )
    indptr, indices, weights = arrays["indptr"], arrays["indices"], arrays["weights"]
    n = int(arrays["n"][()])
    stored_directed = bool(arrays["directed"][()])
    if indptr.shape != (n + 1,):
        raise GraphFormatError(
            f"{name}: indptr has shape {indptr.shape}, expected ({n + 1},) for the stored "
            f"n={n}"
        )
    try:
        g = Graph(indptr, indices, weights, directed=True)
    except (ValueError, TypeError) as exc:
        raise GraphFormatError(f"{name}: invalid graph arrays: {exc}") from None
    k, code = first_bad_weight(g.weights, rule)
    if k >= 0:
        u, v = _stored_edge(g, k)
        where = f"stored edge {k} ({u} -> {v}, 0-based row and column)"
        raise GraphFormatError(
            f"{name}: {bad_weight_message(code, repr(float(g.weights[k])), where)}"
        )
    if not stored_directed:
        k = _first_unpaired_edge(g)
        if k >= 0:
            u, v = _stored_edge(g, k)
            raise GraphFormatError(
                f"{name}: stores directed=False, but its arrays are not symmetric: stored "
                f"edge {k} ({u} -> {v}, weight {float(g.weights[k])!r}) has no reverse "
                f"{v} -> {u} of the same weight (an undirected graph holds every edge both "
                "ways; read it with directed=True, or write it again with write_graph)"
            )
    if directed is None:
        directed = stored_directed
    if directed:
        return g
    if stored_directed:
        return g.symmetrized()
    g.directed = False  # checked symmetric above: skip the constructor's second check
    return g


def _stored_edge(g: Graph, k: int) -> tuple[int, int]:
    return int(np.searchsorted(g.indptr, k, side="right") - 1), int(g.indices[k])


def _first_unpaired_edge(g: Graph) -> int:
    """A stored edge ``(u, v, w)`` with no matching ``(v, u, w)`` (as multisets), or -1."""
    if g.nnz == 0:
        return -1
    rows, cols, w = g._rows(), g.indices, g.weights
    if _csr.first_unsorted_row(g.indptr, cols) < 0:
        # a canonical CSR (what write_graph stores) is symmetric iff it equals its
        # transpose: one parallel CSR build instead of two sorts
        t = graph_from_edges(cols, rows, w, g.n, True)
        if (np.array_equal(t.indptr, g.indptr) and np.array_equal(t.indices, cols)
                and np.array_equal(t.weights, w, equal_nan=True)):
            return -1
    fwd = np.lexsort((w, cols, rows))  # the triples (u, v, w) in order
    rev = np.lexsort((w, rows, cols))  # the reversed triples (v, u, w) in order
    same = (rows[fwd] == cols[rev]) & (cols[fwd] == rows[rev]) & (
        (w[fwd] == w[rev]) | (np.isnan(w[fwd]) & np.isnan(w[rev]))
    )
    if same.all():
        return -1
    i = int(np.argmin(same))
    a, b = fwd[i], rev[i]
    # the smaller of the two triples is one whose copies are not all matched
    mine = (int(rows[a]), int(cols[a]), float(w[a]))
    theirs = (int(cols[b]), int(rows[b]), float(w[b]))
    return int(a) if mine < theirs else int(b)


def _npz_arrays(f, name: str, archive_size: int) -> dict:
    """Load the graph arrays of an ``.npz``, checking every declared size before reading."""
    if not zipfile.is_zipfile(f):
        raise GraphFormatError(f"{name}: not a valid .npz file (not a zip archive)")
    f.seek(0)
    try:
        with zipfile.ZipFile(f) as zf:
            members = {info.filename: info for info in zf.infolist()}
            found = {k: members.get(f"{k}.npy", members.get(k)) for k in _NPZ_KEYS}
            missing = [k for k, info in found.items() if info is None]
            if missing:
                raise GraphFormatError(
                    f"{name}: not a graphpar .npz graph: expected the arrays "
                    f"{', '.join(_NPZ_KEYS)}, missing {', '.join(missing)}"
                )
            headers = {k: _npy_header(zf, found[k], k, name, archive_size) for k in _NPZ_KEYS}
            check_memory(sum(h[3] for h in headers.values()), what="the .npz arrays",
                         source=name)
            return {k: _npy_data(zf, found[k], headers[k], k, name) for k in _NPZ_KEYS}
    except (GraphFormatError, LimitError):
        raise
    except _ZIP_ERRORS as exc:
        raise GraphFormatError(f"{name}: not a valid .npz file: {exc}") from None
    except OSError as exc:
        if exc.errno is not None:
            raise
        raise GraphFormatError(f"{name}: not a valid .npz file: {exc}") from None


def _npy_header(zf, info, key, name, archive_size):
    """``(shape, fortran_order, dtype, nbytes)`` of a member, checked against the archive."""
    fmt = np.lib.format
    with zf.open(info) as m:
        try:
            version = fmt.read_magic(m)
            if version == (1, 0):
                shape, fortran, dtype = fmt.read_array_header_1_0(m)
            elif version == (2, 0):
                shape, fortran, dtype = fmt.read_array_header_2_0(m)
            else:
                raise ValueError(f"unsupported .npy format version {version}")
        except ValueError as exc:
            raise GraphFormatError(
                f"{name}: array {key!r} is not a valid .npy array: {exc}"
            ) from None
        header_len = m.tell()
    kinds, ndim, what = _NPZ_SPEC[key]
    if dtype.hasobject or dtype.kind not in kinds or dtype.fields is not None:
        raise GraphFormatError(
            f"{name}: cannot load the array {key!r}: expected {what}, got dtype {dtype}"
        )
    if len(shape) != ndim:
        kind = "a scalar" if ndim == 0 else "a 1-D array"
        raise GraphFormatError(
            f"{name}: cannot load the array {key!r}: expected {kind}, got shape {shape}"
        )
    count = 1
    for d in shape:
        count *= int(d)
    nbytes = count * dtype.itemsize
    payload = info.file_size - header_len
    if nbytes > payload:
        raise GraphFormatError(
            f"{name}: array {key!r} declares shape {shape} ({count} elements, {nbytes} "
            f"bytes), but the archive holds only {max(payload, 0)} bytes of it (truncated "
            "or corrupt file)"
        )
    if info.compress_type == zipfile.ZIP_STORED:
        if info.file_size > archive_size:
            raise GraphFormatError(
                f"{name}: array {key!r} claims {info.file_size} bytes, more than the whole "
                f"file ({archive_size} bytes): corrupt file"
            )
    else:
        limit = decompression_limit(info.compress_size)
        if info.file_size > limit:
            raise LimitError(
                f"{name}: array {key!r} declares shape {shape} ({count} elements) and "
                f"decompresses from {info.compress_size} to {info.file_size} bytes, more "
                f"than the {limit} bytes allowed for it (set {ENV_MAX_DECOMPRESSED}, e.g. "
                f"{ENV_MAX_DECOMPRESSED}=8G, to raise the limit)"
            )
    return shape, fortran, dtype, nbytes


def _npy_data(zf, info, header, key, name) -> np.ndarray:
    shape, fortran, dtype, nbytes = header
    data = bytearray(nbytes)
    view = memoryview(data)
    got = 0
    with zf.open(info) as m:
        _skip_npy_header(m)
        while got < nbytes:
            piece = m.read(min(nbytes - got, _PIECE))
            if not piece:
                break
            view[got:got + len(piece)] = piece
            got += len(piece)
    if got < nbytes:
        raise GraphFormatError(
            f"{name}: array {key!r} ends after {got} of its {nbytes} bytes (truncated file)"
        )
    count = nbytes // dtype.itemsize if dtype.itemsize else 0
    arr = np.frombuffer(data, dtype=dtype, count=count)
    return arr.reshape(shape, order="F" if fortran else "C")


def _skip_npy_header(m) -> None:
    """Read past the (already checked) .npy header of an open member."""
    fmt = np.lib.format
    version = fmt.read_magic(m)
    (fmt.read_array_header_1_0 if version == (1, 0) else fmt.read_array_header_2_0)(m)


def write_graph(graph: Graph, path, format: str | None = None) -> None:
    """Write a graph file in the format given by ``format=`` or the suffix.

    Parameters
    ----------
    graph : Graph, scipy sparse matrix or array, or dense array
        Converted with :func:`graphpar.validate_graph` (any weights allowed but NaN).
    path : str or path-like
        Destination; a ``.gz``, ``.bz2`` or ``.xz`` suffix compresses.
    format : str, optional
        As for :func:`read_graph`.

    Notes
    -----
    * ``.gr``: ``p sp n m`` then one ``a u v w`` line per stored arc (an
      undirected graph: both ways). DIMACS weights are integers; non-integral
      weights are written in Python's shortest round-trip form, which
      :func:`read_graph` reads back exactly.
    * ``.mtx``: ``integer`` when every weight is integral, else ``real``;
      ``general`` for a directed graph, ``symmetric`` (entries with ``i >= j``)
      for an undirected one.
    * ``.el``/``.txt``/``.wel``: a SNAP-style ``# Nodes: n Edges: m`` comment,
      then ``u v [w]`` lines. ``.wel`` always has the weight column, ``.el``
      only when some weight is not 1. An undirected graph is written as
      ``# Undirected graph`` with each pair once (``u <= v``).
    * ``.npz``: ``indptr``, ``indices``, ``weights``, ``n``, ``directed`` and
      ``format_version``, read back with ``allow_pickle=False``.

    Examples
    --------
    >>> import os, tempfile
    >>> from graphpar import Graph, read_graph
    >>> g = Graph.from_edges([0, 1], [1, 2], [2.5, 1.0])
    >>> f = os.path.join(tempfile.mkdtemp(), "g.mtx")
    >>> write_graph(g, f)
    >>> print(open(f).read())
    %%MatrixMarket matrix coordinate real general
    3 3 2
    1 2 2.5
    2 3 1.0
    <BLANKLINE>
    >>> read_graph(f).weights
    array([2.5, 1. ])
    """
    from graphpar._validation import validate_graph

    fmt, _ = detect_format(path, format)
    g = validate_graph(graph, directed=True, weights="any", name="graph")
    if fmt == "npz":
        arrays = dict(
            indptr=g.indptr, indices=g.indices, weights=g.weights, n=np.int64(g.n),
            directed=np.bool_(g.directed), format_version=np.int64(NPZ_VERSION),
        )
        if Path(os.fspath(path)).suffix.lower() in _COMPRESSORS:
            mem = _pyio.BytesIO()  # zip archives need a seekable file
            np.savez(mem, **arrays)
            with open_binary(path, "wb") as f:
                f.write(mem.getvalue())
        else:
            with open(path, "wb") as f:  # a file object: savez would append ".npz" to a name
                np.savez(f, **arrays)
        return
    rows = np.repeat(np.arange(g.n, dtype=np.int64), np.diff(g.indptr))
    cols = g.indices.astype(np.int64)
    w = g.weights
    if fmt == "gr":
        head = f"c graphpar graph\np sp {g.n} {g.nnz}\n".encode()
        body = format_records(b"a ", rows, cols, w, 1, True)
    elif fmt == "mtx":
        sym = not g.directed
        if sym:
            keep = rows >= cols
            rows, cols, w = rows[keep], cols[keep], w[keep]
        field = "integer" if _all_integral(w) else "real"
        head = (
            f"%%MatrixMarket matrix coordinate {field} "
            f"{'symmetric' if sym else 'general'}\n{g.n} {g.n} {rows.size}\n"
        ).encode()
        body = format_records(b"", rows, cols, w, 1, True)
    else:
        if not g.directed:
            keep = rows <= cols
            rows, cols, w = rows[keep], cols[keep], w[keep]
            kind = "# Undirected graph (each unordered pair of nodes is saved once)\n"
        else:
            kind = "# Directed graph\n"
        with_w = fmt == "wel" or not bool(np.all(w == 1.0))
        cols_doc = "# FromNodeId\tToNodeId" + ("\tWeight\n" if with_w else "\n")
        head = f"{kind}# Nodes: {g.n} Edges: {rows.size}\n{cols_doc}".encode()
        body = format_records(b"", rows, cols, w, 0, with_w)
    with open_binary(path, "wb") as f:
        f.write(head)
        f.write(body)


def _all_integral(w) -> bool:
    return bool(np.all(np.isfinite(w) & (np.floor(w) == w) & (np.abs(w) < 2.0**53)))
