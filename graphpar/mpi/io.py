"""Parallel reading of input files: each rank reads and parses only its own part.

:func:`read_graph` reads a DIMACS ``.gr``, Matrix Market, edge-list or CSV/TSV file:
the body is cut into one byte range per rank, every rank reads and parses the
lines whose first byte lies in its range (the one line-range rule of
:mod:`graphpar.io._lines` and the serial parser,
:func:`graphpar.io._text.parse_body`), and the edges go to the ranks that own
their sources with one ``Alltoallv``. No rank ever holds the whole graph.
Compressed files (``.gz``, ``.bz2``, ``.xz``) are decompressed as a stream by
every rank, which keeps only its range; rank 0 first streams the file once to
learn its uncompressed size (within the decompression limit of
:mod:`graphpar.limits`). ``.npz`` graphs are read on rank 0 and distributed.

CSV/TSV edge lists (:mod:`graphpar.io._csv`) are read the same way, each rank
splitting its lines with the serial reader's code; vertex ids are then made
global collectively, giving exactly the serial numbering:

* string ids (first appearance, row by row, source before target): each rank
  numbers its distinct labels in local first-appearance order and sends them
  to an owner rank chosen by a hash of the label's bytes; the owner keeps, for
  each label, the first (rank, local position) that holds it; a label is then
  new on exactly one rank, the ranks number their new labels after those of
  the ranks below (one ``Exscan``), and the others ask the new label's rank
  for its number (three object all-to-alls in all, of distinct labels only);
* numeric ids: the vertex numbers, as serially (the sparse-id warning counts
  the distinct ids at owner ranks by id range); with ``relabel=True`` the
  distinct ids go to owners by id range, which number them in increasing
  order after the owners below (one ``Exscan``) and answer.

Rank 0 then holds the whole label array (``DistGraph.labels``); no rank holds
every edge. A CSV file with quoted fields (``"``, which may hold newlines, so
that lines cannot be cut by bytes) is read on rank 0 by the serial reader and
distributed.

:func:`read_table_rows` reads each rank's rows of a survival table (CSV, by
the same line-range rule, or ``.npz``) with the serial reader's code.

Errors are the serial readers' messages, raised on every rank
(:func:`graphpar.mpi.comm.run_collectively`). With ``progress`` on,
:func:`read_graph` reports its steps (size and header, reading, parsing,
checking, distributing) through :mod:`graphpar.progress`, from rank 0 alone.
"""

from __future__ import annotations

import dataclasses
import os

import numpy as np
from mpi4py import MPI

from graphpar.io._wording import wording
from graphpar.mpi._graph import DistGraph, distribute_graph, gatherv
from graphpar.mpi.blocks import BlockPartition
from graphpar.mpi.comm import get_comm, run_collectively
from graphpar.mpi.exchange import alltoallv, exchange_counts

__all__ = ["read_graph", "read_table_rows"]


def _uncompressed_size(path) -> int:
    """Stream a compressed file once (within the decompression limit) and count its bytes."""
    from graphpar.io import iter_decompressed

    return sum(len(piece) for piece in iter_decompressed(path))


def read_graph(path, format: str | None = None, *, directed: bool | None = None,
               weights: str = "any", partition: BlockPartition | None = None,
               progress: bool | None = False, source=None, target=None, weight=None,
               relabel: bool = False, comm=None) -> DistGraph:
    """Read a graph file in parallel into a :class:`DistGraph`. Collective.

    Parameters
    ----------
    path : str or path-like
        The file (the same path on every rank; a shared file system).
    format : str, optional
        As :func:`graphpar.read_graph`; default from the suffix.
    directed : bool, optional
        As :func:`graphpar.read_graph` (``None`` keeps the file's meaning).
    weights : {"any", "nonnegative", "finite"}
        As :func:`graphpar.read_graph`: which weights the file may hold.
    partition : BlockPartition, optional
        Which rank owns which vertices; default equal vertex blocks (text
        formats) or balanced by edges (``.npz``).
    progress : bool or None, default False
        Report the steps of the read on stderr, from rank 0 alone
        (:func:`graphpar.progress.progress`; ``None`` follows the ``"graphpar"``
        logger). Every rank may pass the same value.
    source, target, weight : str or int, optional
        CSV/TSV only: the columns, as :func:`graphpar.read_graph` takes them.
    relabel : bool, default False
        Edge lists (``el``, ``wel``, ``csv``, ``tsv``) with numeric ids: number
        the ids present ``0 .. k-1`` in increasing order and keep them as
        labels, as :func:`graphpar.read_graph` does.
    comm : mpi4py.MPI.Comm, optional

    Returns
    -------
    DistGraph
        Gathered on one rank it equals ``graphpar.read_graph(path)`` byte for
        byte, labels included (``DistGraph.labels``, held by rank 0).

    Raises
    ------
    graphpar.io.GraphFormatError, graphpar.io.LimitError, OSError
        The same error on every rank, as the serial reader raises it: the
        first problem in file order, naming the file and the line.

    Notes
    -----
    Each rank parses the lines whose first byte lies in its share of the
    body bytes (:func:`graphpar.io._lines.line_range`), so every line is
    parsed by exactly one rank whatever the line lengths.

    Examples
    --------
    >>> dg = read_graph("roads.gr.gz")   # under mpiexec -n K  # doctest: +SKIP
    """
    from graphpar.progress import progress as report

    comm = get_comm(comm)
    name = os.fspath(path)
    rank = comm.Get_rank()
    with report(_READ_STEPS, f"reading {os.path.basename(name)}", unit="step",
                enabled=progress if rank == 0 else False) as bar:
        return _read_graph(path, format, directed, weights, partition, comm, bar,
                           dict(source=source, target=target, weight=weight), relabel)


_READ_STEPS = 5  # size and header, read, parse, check, distribute


def _read_graph(path, format, directed, weights, partition, comm, bar, columns,
                relabel) -> DistGraph:
    """:func:`read_graph`'s steps, each ending in ``bar.update()``."""
    from graphpar.io import decompression_errors, open_binary
    from graphpar.io import read_graph as serial_read
    from graphpar.io._formats import check_format_options, check_read_arguments
    from graphpar.io._lines import byte_range, read_line_range
    from graphpar.io._text import (
        body_error,
        count_error,
        graph_order,
        parse_body,
        read_header,
        vertex_count_error,
        weight_error,
    )
    from graphpar.kernels import parse as _kp

    rank, size = comm.Get_rank(), comm.Get_size()
    name = os.fspath(path)

    def step(what: str) -> None:
        bar.set_postfix(what)
        bar.update()

    def prepare():
        fmt, comp = check_read_arguments(path, format, directed, weights)
        if fmt not in ("csv", "tsv"):  # the serial reader's refusals
            check_format_options(fmt, any(v is not None for v in columns.values()), relabel)
        if fmt in ("csv", "tsv"):
            return fmt, comp, None
        info = None
        if rank == 0 and fmt != "npz":
            # the size first: it streams the whole file within the decompression limit,
            # so that the header reader below cannot run past it
            fsize = os.path.getsize(path) if comp is None else _uncompressed_size(path)
            with open_binary(path) as f, decompression_errors(path, comp):
                header = read_header(f, fmt, path=name)
            info = (header, fsize)
        return fmt, comp, info

    fmt, comp, info = run_collectively(prepare, comm)
    if fmt in ("csv", "tsv"):
        return _read_csv(path, format, fmt, comp, directed, weights, columns, relabel,
                         partition, comm, step)
    step("header read")
    if fmt == "npz":
        g = run_collectively(
            lambda: serial_read(path, format, directed=directed, weights=weights)
            if rank == 0 else None,
            comm,
        )
        step("read on rank 0")
        bar.update(2)  # no separate parse and check
        out = distribute_graph(g, 0, partition=partition, comm=comm)
        step("distributed")
        return out

    header, fsize = comm.bcast(info, root=0)
    a, b = byte_range(fsize - header.body_offset, rank, size)

    def read_range():
        with open_binary(path) as f, decompression_errors(path, comp):
            return read_line_range(f, header.body_offset, a, b)

    buf = run_collectively(read_range, comm)
    step("bytes read")
    newlines = int(_kp.count_newlines(buf)) if buf.size else 0
    lines_before = comm.exscan(newlines) or 0
    first_line = header.body_line + (lines_before if rank else 0)
    parsed = parse_body(buf, header)
    step("parsed")
    before = comm.exscan(parsed.src.size) or 0
    before = before if rank else 0

    def check_records():
        p = parsed
        upto = before + p.src.size
        if header.m is not None and (upto > header.m or (p.error is not None and upto == header.m)):
            # the first record beyond header.m is here, before any bad line: as the serial
            # reader, report the extra record (the parser points at it)
            p = parse_body(buf, header, max_records=max(0, header.m - before))
        if p.error is not None:
            raise body_error(buf, header, p.error, path=name, first_line=first_line)
        return p

    parsed = run_collectively(check_records, comm)
    total = comm.allreduce(parsed.src.size)
    if header.m is not None and total != header.m:
        # too few records: the last rank with bytes builds the serial reader's message
        holder = max(comm.allreduce(rank if buf.size else -1, op=MPI.MAX), 0)
        run_collectively(lambda: _raise(
            count_error(buf, dataclasses.replace(header, body_line=first_line), total,
                        path=name) if rank == holder else None), comm)
    run_collectively(lambda: _raise(
        weight_error(buf, header, parsed, weights, path=name, first_line=first_line)), comm)
    src, dst, w = parsed.src, parsed.dst, parsed.weights
    top = comm.allreduce(max(int(src.max(initial=-1)), int(dst.max(initial=-1))) + 1,
                         op=MPI.MAX)
    n = graph_order(header, top)
    if not relabel:  # as serially: relabelled ids are labels, not vertex numbers
        run_collectively(lambda: _raise(
            vertex_count_error(buf, header, parsed, n, top, total, path=name,
                               first_line=first_line)), comm)
    undirected = (not header.directed) if directed is None else (not directed)
    if header.symmetric and not undirected:
        src, dst = np.concatenate([src, dst]), np.concatenate([dst, src])
        w = np.concatenate([w, w])
    labels = None
    if fmt in ("el", "wel"):
        src, dst, n, labels = numeric_ids(src, dst, n, relabel=relabel, path=name,
                                          declared=header.n, comm=comm)
    step("checked")
    out = DistGraph.from_local_edges(src, dst, w, n, directed=not undirected,
                                     partition=partition, labels=labels,
                                     labelled=relabel and fmt in ("el", "wel"), comm=comm)
    step("distributed")
    return out


def _read_csv(path, format, fmt, comp, directed, weights, columns, relabel, partition, comm,
              step) -> DistGraph:
    """:func:`read_graph` of a CSV/TSV edge list: the serial reader's steps, rank by rank.

    Every check is one collective stage, in the serial reader's order, so that
    the first problem of the file is reported whichever rank finds it.
    """
    from graphpar.io import decompression_errors, open_binary
    from graphpar.io import read_graph as serial_read
    from graphpar.io._csv import (
        check_ids,
        check_nul,
        csv_columns,
        csv_header,
        decode_labels,
        first_hit_line,
        integer_ids,
        parse_weights,
        split_csv_body,
        string_ids,
    )
    from graphpar.io._lines import byte_range, read_line_range
    from graphpar.kernels import parse as _kp
    from graphpar.limits import check_vertex_count

    rank, size = comm.Get_rank(), comm.Get_size()
    name = os.fspath(path)

    def prepare():
        if rank != 0:
            return None
        fsize = os.path.getsize(path) if comp is None else _uncompressed_size(path)
        with open_binary(path) as f, decompression_errors(path, comp):
            head = f.read((1 << 20) + 1)  # the serial reader looks for the header in 1 MiB
        names, offset = csv_header(np.frombuffer(head, dtype=np.uint8), name, fmt)
        return names, offset, csv_columns(names, columns["source"], columns["target"],
                                          columns["weight"], name), fsize

    names, offset, (js, jt, jw), fsize = comm.bcast(run_collectively(prepare, comm), root=0)
    step("header read")
    a, b = byte_range(max(fsize - offset, 0), rank, size)

    def read_range():
        with open_binary(path) as f, decompression_errors(path, comp):
            return read_line_range(f, offset, a, b)

    buf = run_collectively(read_range, comm)
    newlines = int(_kp.count_newlines(buf)) if buf.size else 0
    before = comm.exscan(newlines) or 0
    first_line = 2 + (before if rank else 0)
    run_collectively(lambda: check_nul(buf, name, first_line), comm)
    step("bytes read")
    if comm.allreduce(bool((buf == ord('"')).any()), op=MPI.LOR):
        # quoted fields may hold newlines: lines cannot be cut by bytes; read on rank 0
        buf = None
        g = run_collectively(
            lambda: serial_read(path, format, directed=directed, weights=weights, relabel=relabel,
                                **columns) if rank == 0 else None, comm)
        step("read on rank 0")
        step("checked")
        part = partition
        if part is None:
            part = BlockPartition.block(comm.bcast(g.n if rank == 0 else None, root=0), size)
        out = distribute_graph(g, 0, partition=part, comm=comm)
        step("distributed")
        return out
    fields = run_collectively(
        lambda: split_csv_body(buf, fmt, names, (js, jt, jw), name, first_line), comm)
    buf = None  # the tokens hold what is needed
    step("parsed")
    lines = fields.lines
    src_tok, dst_tok = fields.tokens[js], fields.tokens[jt]
    run_collectively(lambda: check_ids(src_tok, lines, name, names[js], "source id"), comm)
    run_collectively(lambda: check_ids(dst_tok, lines, name, names[jt], "target id"), comm)
    m = comm.allreduce(src_tok.size)
    w = np.ones(src_tok.size) if jw is None else run_collectively(
        lambda: parse_weights(fields.tokens[jw], lines, name, names[jw], weights,
                              chosen=columns["weight"] is None), comm)
    src, dst = integer_ids(src_tok), integer_ids(dst_tok)
    if comm.allreduce(src is not None and dst is not None, op=MPI.LAND):
        top = comm.allreduce(int(max(src.max(initial=-1), dst.max(initial=-1))) + 1,
                             op=MPI.MAX)
        if not relabel and top > 0:
            hit = first_hit_line(src, dst, lines, top - 1) or np.iinfo(np.int64).max
            hit = comm.allreduce(hit, op=MPI.MIN)
            run_collectively(lambda: check_vertex_count(
                top, edges=m, source=f"{name}: line {hit}",
                what=f"has vertex id {top - 1}, so needs", renumber_hint=wording().renumber_hint),
                comm)
        src, dst, n, labels = numeric_ids(src, dst, top, relabel=relabel, path=name,
                                          comm=comm)
        labelled = bool(relabel)
    else:
        codes, local = string_ids(src_tok, dst_tok)
        decoded = run_collectively(lambda: decode_labels(local, codes, lines, name), comm)
        gid, new, n = first_appearance_numbering(local, comm)
        src, dst = gid[codes[0::2]], gid[codes[1::2]]
        pieces = comm.gather(decoded[new], root=0)
        labels = None
        if rank == 0:
            from graphpar._graph import label_array

            labels = label_array(np.concatenate(pieces) if pieces else decoded[:0])
        labelled = True
    step("checked")
    out = DistGraph.from_local_edges(src, dst, w, n, directed=directed is not False,
                                     partition=partition, labels=labels, labelled=labelled,
                                     comm=comm)
    step("distributed")
    return out


def _by_owner(keys: np.ndarray, owner: np.ndarray, size: int):
    """The order that groups ``keys`` by owner rank, and the count for each rank."""
    order = np.argsort(owner, kind="stable")
    return order, np.bincount(owner, minlength=size).astype(np.int64)


def _split(arr: np.ndarray, counts: np.ndarray) -> list[np.ndarray]:
    return np.split(arr, np.cumsum(counts)[:-1])


def _label_hash(tok: np.ndarray) -> np.ndarray:
    """A hash of each bytes label, independent of the array's width (padding adds nothing)."""
    width = max(tok.dtype.itemsize, 1)
    mat = np.ascontiguousarray(tok).view(np.uint8).reshape(tok.size, -1) if tok.size else \
        np.zeros((0, width), dtype=np.uint8)
    h = np.zeros(tok.size, dtype=np.uint64)
    power = np.ones(1, dtype=np.uint64)
    with np.errstate(over="ignore"):
        for k in range(mat.shape[1]):
            h += mat[:, k].astype(np.uint64) * power[0]
            power *= np.uint64(1099511628211)
        h ^= h >> np.uint64(29)
    return h


def first_appearance_numbering(local: np.ndarray, comm) -> tuple[np.ndarray, np.ndarray, int]:
    """Number labels in order of first appearance across ranks (rank order, then local order).

    ``local`` holds this rank's distinct labels (bytes) in order of their
    first appearance here. Returns ``(gid, new, n)``: the global number of
    each, whether this rank is where each appears first (its labels are
    numbered ``gid[new]``, consecutively, after those of the lower ranks), and
    the number of distinct labels. Collective: the labels go to owner ranks
    by a hash of their bytes, so no rank holds every label.

    Examples
    --------
    >>> labels = np.array([b"Rome", b"Pisa"])
    >>> gid, new, n = first_appearance_numbering(labels, comm)  # doctest: +SKIP
    """
    rank, size = comm.Get_rank(), comm.Get_size()
    k = local.size
    span = comm.allreduce(k, op=MPI.MAX) + 1  # key = rank * span + local position
    order, counts = _by_owner(local, (_label_hash(local) % np.uint64(size)).astype(np.int64),
                              size)
    pos = order.astype(np.int64)
    got = comm.alltoall(list(zip(_split(local[order], counts), _split(pos, counts),
                                 strict=True)))
    # the owner: the first (rank, position) of each label it owns
    labs = [g[0] for g in got if g[0].size]
    keys = np.concatenate([r * span + g[1] for r, g in enumerate(got)])
    if labs:
        _, inv = np.unique(np.concatenate(labs), return_inverse=True)
        inv = inv.reshape(-1)
        first = np.full(int(inv.max()) + 1, np.iinfo(np.int64).max, dtype=np.int64)
        np.minimum.at(first, inv, keys)
        win = first[inv]
    else:
        win = np.zeros(0, dtype=np.int64)
    back = comm.alltoall(_split(win, np.array([g[1].size for g in got], dtype=np.int64)))
    winner = np.empty(k, dtype=np.int64)
    winner[pos] = np.concatenate(back) if back else winner[:0]
    where, at = winner // span, winner % span
    new = where == rank
    c = int(np.count_nonzero(new))
    off = comm.exscan(c) or 0
    off = off if rank else 0
    gid = np.full(k, -1, dtype=np.int64)
    gid[new] = off + np.arange(c, dtype=np.int64)
    # the other labels: ask the rank where each appears first
    order, counts = _by_owner(at, where, size)
    asked = comm.alltoall(_split(at[order], counts))
    answers = comm.alltoall([gid[q] for q in asked])
    gid[order] = np.concatenate(answers) if answers else gid[:0]
    return gid, new, int(comm.allreduce(c))


def numeric_ids(src: np.ndarray, dst: np.ndarray, n: int, *, relabel: bool, path: str,
                declared: int | None = None, comm=None):
    """:func:`graphpar.io._csv.compact_ids` on edges spread across ranks. Collective.

    Returns ``(src, dst, n, labels)`` as the serial rule does: with
    ``relabel`` the distinct ids, numbered ``0 .. k-1`` in increasing order
    (``labels``, on rank 0 alone, int64); otherwise the ids unchanged and the
    sparse-id warning (on rank 0) when most of the ``n`` ids are absent. The
    distinct ids go to owner ranks by id range, so no rank holds them all.

    Examples
    --------
    >>> out = numeric_ids(src, dst, top, relabel=True, path="g.el")  # doctest: +SKIP
    """
    from graphpar.io._csv import sparse_check_needed, warn_sparse_ids

    comm = get_comm(comm)
    rank, size = comm.Get_rank(), comm.Get_size()
    if not relabel and not sparse_check_needed(n, declared):
        return src, dst, int(n), None
    local = np.unique(np.concatenate([src, dst])).astype(np.int64)
    ranges = BlockPartition.block(max(int(n), 0), size)
    owner = np.searchsorted(ranges.offsets, local, side="right") - 1
    counts = np.bincount(owner, minlength=size).astype(np.int64)
    recvcounts = exchange_counts(counts, comm)
    got = alltoallv(local, counts, recvcounts, comm)
    mine = np.unique(got)
    total = int(comm.allreduce(mine.size))
    if not relabel:
        if rank == 0:
            warn_sparse_ids(int(n), total, path, stacklevel=4)
        return src, dst, int(n), None
    off = comm.exscan(mine.size) or 0
    off = off if rank else 0
    ids = (off + np.searchsorted(mine, got)).astype(np.int64)
    back = alltoallv(ids, recvcounts, counts, comm)
    new_src = back[np.searchsorted(local, src)]
    new_dst = back[np.searchsorted(local, dst)]
    labels = gatherv(mine, 0, comm)
    return new_src, new_dst, total, labels



def read_table_rows(path, comm=None) -> tuple[dict[str, np.ndarray], int]:
    """Read this rank's rows of a CSV or ``.npz`` survival table. Collective.

    Parameters
    ----------
    path : str or path-like
        The table (the same path on every rank), as the serial reader takes
        it: a CSV file with a header of column names (``.gz``, ``.bz2``,
        ``.xz`` decompressed) or an ``.npz`` file of one 1-D array per column.
    comm : mpi4py.MPI.Comm, optional

    Returns
    -------
    table : Table
        This rank's rows, ``{column name: float64 array}`` in file order (a
        ``Table`` of :mod:`graphpar._cox_reader`, which knows where its rows
        came from); the ranks' rows, concatenated in rank order, are the
        whole table.
    row0 : int
        The index in the whole table of this rank's first row.

    Raises
    ------
    ValueError, LimitError, OSError
        The serial reader's error for the first problem of the file, naming
        the file, the line (or array and index) and the column, on every rank.

    Notes
    -----
    The serial reader's own code reads each rank's share: the lines of a CSV
    file whose first byte lies in the rank's share of the body bytes (the
    line-range rule of the graph readers, :func:`graphpar.io._lines.line_range`),
    numbered from the line counts of the lower ranks; the rank's row range of
    an ``.npz`` file.

    Examples
    --------
    >>> table, row0 = read_table_rows("patients.csv")  # under mpiexec  # doctest: +SKIP
    """
    from graphpar._cox_reader import CsvSource, byte_range, count_lines, parse_lines, read_npz

    comm = get_comm(comm)
    path = os.fspath(path)
    rank, nranks = comm.Get_rank(), comm.Get_size()
    if path.lower().endswith(".npz"):
        table = run_collectively(lambda: read_npz(path, rank, nranks), comm)
        return table, table.first_row

    def read_block():
        with CsvSource(path) as src:
            return (src.names, src.text), src.lines(*byte_range(src, rank, nranks))

    (names, text), block = run_collectively(read_block, comm)
    before = comm.exscan(count_lines(block))
    first_line = 2 + (0 if rank == 0 or before is None else int(before))
    table = run_collectively(lambda: parse_lines(path, names, block, first_line, text=text),
                             comm)
    return table, first_line - 2


def _raise(err: BaseException | None) -> None:
    """Raise ``err`` unless it is None: for the readers' error builders under run_collectively."""
    if err is not None:
        raise err
