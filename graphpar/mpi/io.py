"""Parallel reading of input files: each rank reads and parses only its own part.

:func:`read_graph` reads a DIMACS ``.gr``, Matrix Market or edge-list file:
the body is cut into one byte range per rank, every rank reads and parses the
lines whose first byte lies in its range (the one line-range rule of
:mod:`graphpar.io._lines` and the serial parser,
:func:`graphpar.io._text.parse_body`), and the edges go to the ranks that own
their sources with one ``Alltoallv``. No rank ever holds the whole graph.
Compressed files (``.gz``, ``.bz2``, ``.xz``) are decompressed as a stream by
every rank, which keeps only its range; rank 0 first streams the file once to
learn its uncompressed size (within the decompression limit of
:mod:`graphpar.limits`). ``.npz`` graphs are read on rank 0 and distributed.

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

from graphpar.mpi._graph import DistGraph, distribute_graph
from graphpar.mpi.blocks import BlockPartition
from graphpar.mpi.comm import get_comm, run_collectively

__all__ = ["read_graph", "read_table_rows"]


def _uncompressed_size(path) -> int:
    """Stream a compressed file once (within the decompression limit) and count its bytes."""
    from graphpar.io import iter_decompressed

    return sum(len(piece) for piece in iter_decompressed(path))


def read_graph(path, format: str | None = None, *, directed: bool | None = None,
               weights: str = "any", partition: BlockPartition | None = None,
               progress: bool | None = False, comm=None) -> DistGraph:
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
    comm : mpi4py.MPI.Comm, optional

    Returns
    -------
    DistGraph
        Gathered on one rank it equals ``graphpar.read_graph(path)`` byte for byte.

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
        return _read_graph(path, format, directed, weights, partition, comm, bar)


_READ_STEPS = 5  # size and header, read, parse, check, distribute


def _read_graph(path, format, directed, weights, partition, comm, bar) -> DistGraph:
    """:func:`read_graph`'s steps, each ending in ``bar.update()``."""
    from graphpar.io import decompression_errors, open_binary
    from graphpar.io import read_graph as serial_read
    from graphpar.io._formats import check_read_arguments
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
        if fmt in ("csv", "tsv"):
            raise ValueError(
                f"{name}: CSV/TSV edge lists are not read under MPI yet; convert the file "
                "once, serially, with graphpar.io.write_graph(graphpar.io.read_graph(...), "
                "'graph.npz') and run on the .npz"
            )
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
    run_collectively(lambda: _raise(
        vertex_count_error(buf, header, parsed, n, top, total, path=name,
                           first_line=first_line)), comm)
    undirected = (not header.directed) if directed is None else (not directed)
    if header.symmetric and not undirected:
        src, dst = np.concatenate([src, dst]), np.concatenate([dst, src])
        w = np.concatenate([w, w])
    step("checked")
    out = DistGraph.from_local_edges(src, dst, w, n, directed=not undirected,
                                     partition=partition, comm=comm)
    step("distributed")
    return out



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
