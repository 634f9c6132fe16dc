"""Reading and writing graph files by format: :func:`read_graph`, :func:`write_graph`."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from graphpar._graph import Graph, graph_from_edges
from graphpar.io._compression import COMPRESSORS, open_output, read_decompressed
from graphpar.io._csv import (
    CSV_DELIMITERS,
    compact_ids,
    read_csv_graph,
    warn_labels_dropped,
    write_csv_graph,
)
from graphpar.io._npz import read_npz, write_npz
from graphpar.io._text import (
    WEIGHT_RULES,
    body_error,
    count_error,
    format_records,
    graph_order,
    integral_weights,
    parse_body,
    parse_header,
    vertex_count_error,
    weight_error,
)
from graphpar.io._wording import wording

__all__ = ["detect_format", "check_read_arguments", "check_format_options", "read_graph",
           "write_graph"]

_SUFFIX = {
    ".gr": "gr", ".mtx": "mtx", ".mm": "mtx", ".el": "el", ".txt": "el", ".wel": "wel",
    ".npz": "npz", ".csv": "csv", ".tsv": "tsv",
}
_ALIASES = {
    "gr": "gr", "dimacs": "gr", "mtx": "mtx", "mm": "mtx", "matrixmarket": "mtx",
    "el": "el", "txt": "el", "edgelist": "el", "snap": "el", "wel": "wel", "npz": "npz",
    "csv": "csv", "tsv": "tsv",
}


def detect_format(path, format: str | None = None) -> tuple[str, str | None]:
    """Return ``(format, compression)`` for a path, from ``format=`` or its suffixes.

    Parameters
    ----------
    path : str or path-like
    format : str, optional
        One of ``gr`` (alias ``dimacs``), ``mtx`` (``mm``, ``matrixmarket``),
        ``el`` (``txt``, ``edgelist``, ``snap``), ``wel``, ``npz``, ``csv``,
        ``tsv``. Default: from the suffix before any ``.gz``/``.bz2``/``.xz``.

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
    comp = suffixes[-1] if suffixes and suffixes[-1] in COMPRESSORS else None
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


def check_read_arguments(path, format, directed, weights) -> tuple[str, str | None]:
    """Check the arguments of :func:`read_graph`; return ``(format, compression)``.

    The serial and the MPI reader (:func:`graphpar.mpi.io.read_graph`) take
    the same arguments and refuse the same values with the same message.

    Examples
    --------
    >>> check_read_arguments("roads.gr.gz", None, None, "any")
    ('gr', '.gz')
    >>> check_read_arguments("roads.gr", None, "yes", "any")
    Traceback (most recent call last):
    ...
    TypeError: directed must be True, False or None, got 'yes'
    """
    fmt, comp = detect_format(path, format)
    if directed is not None and not isinstance(directed, (bool, np.bool_)):
        raise TypeError(f"directed must be True, False or None, got {directed!r}")
    if weights not in WEIGHT_RULES:
        raise ValueError(f"weights must be one of {', '.join(WEIGHT_RULES)}, got {weights!r}")
    return fmt, comp


def check_format_options(fmt: str, columns_given: bool, relabel: bool) -> None:
    """Refuse column choices for a format other than CSV or TSV (``fmt``), and relabelling
    for one that numbers its vertices itself; in the reader's wording (flags for the CLI).

    Examples
    --------
    >>> check_format_options("gr", False, relabel=True)
    Traceback (most recent call last):
    ...
    ValueError: relabel=True applies to edge lists (el, wel, csv, tsv); a 'gr' file numbers ...
    """
    w = wording()
    if columns_given:
        raise ValueError(f"{w.columns} choose the columns of a CSV or TSV file; a {fmt!r} file "
                         "has fixed columns")
    if relabel and fmt not in ("el", "wel"):
        raise ValueError(f"{w.relabel} applies to edge lists (el, wel, csv, tsv); a {fmt!r} "
                         "file numbers its vertices itself")


def read_graph(
    path, format: str | None = None, *, directed: bool | None = None, weights: str = "any",
    progress: bool | None = False, source=None, target=None, weight=None,
    relabel: bool = False,
) -> Graph:
    """Read a graph file.

    Parameters
    ----------
    path : str or path-like
        The file. A ``.gz``, ``.bz2`` or ``.xz`` suffix is decompressed.
    format : str, optional
        ``"gr"``, ``"mtx"``, ``"el"``, ``"wel"``, ``"npz"``, ``"csv"`` or
        ``"tsv"`` (see :func:`detect_format`); default from the suffix.
    directed : bool, optional
        ``None`` keeps the file's own meaning: DIMACS arcs are directed; a
        Matrix Market ``symmetric`` file is undirected (``general`` directed);
        an edge list is directed unless a leading comment says ``Undirected
        graph`` (SNAP's header); ``.npz`` keeps what was stored (after checking
        that a graph stored as undirected holds every edge both ways).
        ``False`` stores every edge both ways. ``True`` keeps the edges as
        listed (a symmetric Matrix Market file still gives both ``(i, j)`` and
        ``(j, i)``). A CSV/TSV edge list is directed unless ``False``.
    weights : {"any", "nonnegative", "finite"}
        Which weights the file may hold, as :func:`graphpar.validate_graph`'s
        rule: a NaN weight is always an error; ``"any"`` (the default) reads
        negative and infinite weights and leaves them to the method that uses
        the graph; ``"nonnegative"`` refuses negative ones and ``"finite"``
        negative and infinite ones, naming the file and the line (or, for
        ``.npz``, the stored edge) -- what a caller who will search shortest
        paths should ask for.
    progress : bool or None, default False
        Report the bytes decompressed and parsed on stderr
        (:func:`graphpar.progress.progress`; ``None`` follows the ``"graphpar"``
        logger).
    source, target, weight : str or int, optional
        CSV/TSV only: the columns (header names, or 0-based positions) of the
        source ids, the target ids and the weights. Default: the first two
        columns, and the column named ``weight``, else the third column of a
        file with exactly three, else none (``weight=False``: every edge
        weighs 1). Ids that are all non-negative integers in canonical form
        (no leading zero) up to ``2**63 - 1`` are vertex numbers; otherwise
        every id is a label (``g.labels``, numbered in order of first
        appearance), so ``007`` and ``7`` are two labels. Details:
        :mod:`graphpar.io._csv`.
    relabel : bool, default False
        Edge lists (``el``, ``wel``, ``csv``, ``tsv``) with numeric ids: number
        the ids present ``0 .. k-1`` in increasing order and keep the ids as
        ``g.labels`` (int64), so that vertices can be named by their ids. By
        default the ids are the vertex numbers (as SNAP files mean them), and
        a graph whose largest id is far above the number of ids present warns
        (``UserWarning``) and suggests ``relabel=True``.

    Returns
    -------
    Graph
        Rows sorted, duplicate edges collapsed to their smallest weight (text
        formats); an ``.npz`` file gives back exactly the stored arrays. Edges
        without a weight column (Matrix Market ``pattern``, two-column edge
        lists) weigh 1. An edge list has ``n = max(id) + 1``, or the ``Nodes:``
        count of a SNAP header comment when larger. ``g.labels`` holds the
        labels of a CSV file with string ids, the ids with ``relabel=True``,
        what an ``.npz`` file stored, and None otherwise.

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
    fmt, comp = check_read_arguments(path, format, directed, weights)
    if fmt in CSV_DELIMITERS:
        return read_csv_graph(path, comp, fmt, directed=directed, weights=weights,
                              source=source, target=target, weight=weight, relabel=relabel,
                              progress=progress)
    check_format_options(fmt, any(c is not None for c in (source, target, weight)), relabel)
    if fmt == "npz":
        return read_npz(path, comp, directed, weights, progress=progress)
    from graphpar.progress import progress as report

    name = os.fspath(path)
    buf = read_decompressed(path, comp, progress=progress)
    header = _header_of(buf, fmt, name)
    body = buf[header.body_offset:]
    with report(body.size, f"reading {os.path.basename(name)}", unit="B",
                enabled=progress) as bar:
        parsed = parse_body(body, header, max_records=header.m, bar=bar)
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
    # with relabel the ids are labels, not vertex numbers: no count follows from the largest
    err = None if relabel else vertex_count_error(body, header, parsed, n, top, src.size,
                                                  path=name)
    if err is not None:
        raise err
    undirected = (not header.directed) if directed is None else (not directed)
    if header.symmetric and not undirected:
        src, dst = np.concatenate([src, dst]), np.concatenate([dst, src])
        w = np.concatenate([w, w])
    labels = None
    if fmt in ("el", "wel"):
        src, dst, n, labels = compact_ids(src, dst, n, relabel=relabel, path=name,
                                          declared=header.n)
    try:
        return graph_from_edges(src, dst, w, n, not undirected, labels=labels)
    except MemoryError:
        raise MemoryError(
            f"{name}: the graph has {n} vertices and {src.size} edges, more than this "
            "machine can hold"
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
      ``format_version`` (and ``labels`` for a labelled graph, a unicode or
      int64 array), read back with ``allow_pickle=False``.
    * ``.csv``/``.tsv``: a ``source,target,weight`` header, then one edge per
      line, vertices as their labels (see :func:`graphpar.io._csv.write_csv_graph`).
      A graph that would not read back the same (a vertex in no edge, string
      labels that all read as vertex numbers) raises ``ValueError``: write
      ``.npz``.

    Labels are kept by ``.npz`` and ``.csv``/``.tsv`` files only; the other
    formats write vertex numbers, with a ``UserWarning`` for a labelled graph.

    The file is written atomically (:func:`graphpar.io.atomic_write`): into a
    temporary file beside ``path``, renamed to ``path`` once complete, so an
    error or a kill part-way leaves the old file (or none) and no partial one.

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

    fmt, comp = detect_format(path, format)
    g = validate_graph(graph, directed=True, weights="any", name="graph")
    if fmt in CSV_DELIMITERS:
        write_csv_graph(g, path, fmt)
        return
    if fmt == "npz":
        write_npz(g, path, comp)
        return
    warn_labels_dropped(g, fmt, path)
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
        field = "integer" if integral_weights(w) else "real"
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
    with open_output(path) as f:
        f.write(head)
        f.write(body)
