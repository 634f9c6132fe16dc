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
import gzip
import io as _pyio
import lzma
import os
import zipfile
from pathlib import Path

import numpy as np

from graphpar.graph import Graph, graph_from_edges
from graphpar.io_errors import GraphFormatError
from graphpar.io_text import (
    body_error,
    count_error,
    format_records,
    parse_body,
    parse_header,
)

__all__ = ["GraphFormatError", "read_graph", "write_graph", "detect_format", "open_binary"]

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


def _read_bytes(path, comp) -> np.ndarray:
    if comp is None:
        return np.fromfile(path, dtype=np.uint8)
    with open_binary(path) as f:
        try:
            data = f.read()
        except (OSError, EOFError, lzma.LZMAError) as exc:
            raise GraphFormatError(f"{path}: cannot decompress ({comp}): {exc}") from None
    return np.frombuffer(bytearray(data), dtype=np.uint8)


def read_graph(path, format: str | None = None, *, directed: bool | None = None) -> Graph:
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
        graph`` (SNAP's header); ``.npz`` keeps what was stored. ``False``
        stores every edge both ways. ``True`` keeps the edges as listed (a
        symmetric Matrix Market file still gives both ``(i, j)`` and ``(j, i)``).

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
        disagree with the header, vertex ids out of range, non-numeric tokens.
    OSError
        When the file cannot be read.

    Examples
    --------
    >>> import os, tempfile
    >>> f = os.path.join(tempfile.mkdtemp(), "tiny.gr")
    >>> _ = open(f, "w").write("c tiny\\np sp 3 2\\na 1 2 4\\na 2 3 1\\n")
    >>> g = read_graph(f)
    >>> g.n, g.nnz, g.to_scipy().toarray()[0]
    (3, 2, array([0., 4., 0.]))
    """
    fmt, comp = detect_format(path, format)
    if directed is not None and not isinstance(directed, (bool, np.bool_)):
        raise TypeError(f"directed must be True, False or None, got {directed!r}")
    if fmt == "npz":
        return _read_npz(path, comp, directed)
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
    n = header.n
    if header.n is None or fmt in ("el", "wel"):
        top = int(max(src.max(initial=-1), dst.max(initial=-1))) + 1
        n = max(top, header.n or 0)
    undirected = (not header.directed) if directed is None else (not directed)
    if header.symmetric and not undirected:
        src, dst = np.concatenate([src, dst]), np.concatenate([dst, src])
        w = np.concatenate([w, w])
    try:
        return graph_from_edges(src, dst, w, n, not undirected)
    except MemoryError:
        raise GraphFormatError(
            f"{name}: the graph needs {n} vertices (from the header or the largest vertex "
            "id), more than this machine can allocate"
        ) from None


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


def _read_npz(path, comp, directed) -> Graph:
    name = os.fspath(path)
    source = path if comp is None else _pyio.BytesIO(_read_bytes(path, comp).tobytes())
    if not zipfile.is_zipfile(source):
        raise GraphFormatError(f"{name}: not a valid .npz file (not a zip archive)")
    if comp is not None:
        source.seek(0)
    try:
        with np.load(source, allow_pickle=False) as z:
            missing = [k for k in _NPZ_KEYS if k not in z.files]
            if missing:
                raise GraphFormatError(
                    f"{name}: not a graphpar .npz graph: expected the arrays "
                    f"{', '.join(_NPZ_KEYS)}, missing {', '.join(missing)}"
                )
            version = int(z["format_version"])
            if version > NPZ_VERSION:
                raise GraphFormatError(
                    f"{name}: .npz graph format version {version} is newer than this "
                    f"graphpar reads ({NPZ_VERSION})"
                )
            indptr, indices, weights = z["indptr"], z["indices"], z["weights"]
            n = int(z["n"])
            stored_directed = bool(z["directed"])
    except (zipfile.BadZipFile, EOFError) as exc:
        raise GraphFormatError(f"{name}: not a valid .npz file: {exc}") from None
    except GraphFormatError:
        raise
    except ValueError as exc:  # e.g. object arrays refused by allow_pickle=False
        raise GraphFormatError(f"{name}: cannot load the .npz arrays: {exc}") from None
    if indptr.shape != (n + 1,):
        raise GraphFormatError(
            f"{name}: indptr has shape {indptr.shape}, expected ({n + 1},) for n={n}"
        )
    try:
        g = Graph(indptr, indices, weights, directed=stored_directed)
    except (ValueError, TypeError) as exc:
        raise GraphFormatError(f"{name}: invalid graph arrays: {exc}") from None
    if directed is None or bool(directed) == stored_directed:
        return g
    if directed:  # an undirected graph already holds both ways
        return Graph(g.indptr, g.indices, g.weights, directed=True)
    return g.symmetrized()


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
