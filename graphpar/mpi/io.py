"""Parallel reading of text graph files: each rank parses its own byte range.

The body of a DIMACS ``.gr``, Matrix Market or edge-list file is cut into one
byte range per rank; every rank reads and parses the lines that start in its
range (:func:`graphpar.io_text.parse_body`), and the edges go
to the ranks that own their sources with one ``Alltoallv``. No rank ever holds
the whole graph. Compressed files (``.gz``, ``.bz2``, ``.xz``) are decompressed
as a stream by every rank, which keeps only its range; rank 0 first streams
the file once to learn its uncompressed size (within the decompression limit of
:mod:`graphpar.limits`). ``.npz`` files are read on rank 0
and scattered.
"""

from __future__ import annotations

import dataclasses
import os

import numpy as np
from mpi4py import MPI

from graphpar.mpi.comm import agree_on_error, get_comm, run_collectively
from graphpar.mpi.graph import DistGraph, scatter_graph
from graphpar.mpi.partition import BlockPartition

__all__ = ["read_graph"]


def _uncompressed_size(path) -> int:
    """Stream a compressed file once (within the decompression limit) and count its bytes."""
    from graphpar.io import iter_decompressed

    return sum(len(piece) for piece in iter_decompressed(path))


def read_graph(path, format: str | None = None, *, directed: bool | None = None,
               weights: str = "any", partition: BlockPartition | None = None,
               comm=None) -> DistGraph:
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
    body bytes (:func:`graphpar.io_text.line_range`), so every line is parsed
    by exactly one rank whatever the line lengths.

    Examples
    --------
    >>> dg = read_graph("roads.gr.gz")   # under mpiexec -n K  # doctest: +SKIP
    """
    from graphpar.io import decompression_errors, detect_format, graph_order, open_binary
    from graphpar.io import read_graph as serial_read
    from graphpar.io_text import (
        WEIGHT_RULES,
        body_error,
        byte_range,
        count_error,
        parse_body,
        read_header,
        read_line_range,
        vertex_count_error,
        weight_error,
    )
    from graphpar.kernels import parse as _kp

    comm = get_comm(comm)
    rank, size = comm.Get_rank(), comm.Get_size()
    name = os.fspath(path)

    def prepare():
        fmt, comp = detect_format(path, format)
        if directed is not None and not isinstance(directed, (bool, np.bool_)):
            raise TypeError(f"directed must be True, False or None, got {directed!r}")
        if weights not in WEIGHT_RULES:
            raise ValueError(
                f"weights must be one of {', '.join(WEIGHT_RULES)}, got {weights!r}"
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
    if fmt == "npz":
        g = run_collectively(
            lambda: serial_read(path, format, directed=directed, weights=weights)
            if rank == 0 else None,
            comm,
        )
        return scatter_graph(g, 0, partition=partition, comm=comm)

    header, fsize = comm.bcast(info, root=0)
    a, b = byte_range(fsize - header.body_offset, rank, size)

    def read_range():
        with open_binary(path) as f, decompression_errors(path, comp):
            return read_line_range(f, header.body_offset, a, b)

    buf = run_collectively(read_range, comm)
    newlines = int(_kp.count_newlines(buf)) if buf.size else 0
    lines_before = comm.exscan(newlines) or 0
    first_line = header.body_line + (lines_before if rank else 0)
    parsed = parse_body(buf, header)
    count = parsed.src.size
    before = comm.exscan(count) or 0
    before = before if rank else 0
    err = None
    if header.m is not None and (
        before + count > header.m or (parsed.error is not None and before + count == header.m)
    ):
        # the first record beyond header.m is here, before any bad line: as the serial
        # reader, report the extra record (the parser points at it)
        parsed = parse_body(buf, header, max_records=max(0, header.m - before))
        count = parsed.src.size
    if parsed.error is not None:
        err = body_error(buf, header, parsed.error, path=name, first_line=first_line)
    err = agree_on_error(err, comm)
    if err is not None:
        raise err
    total = comm.allreduce(count)
    if header.m is not None and total != header.m:
        # too few records: the last rank with bytes builds the serial reader's message
        holder = comm.allreduce(rank if buf.size else -1, op=MPI.MAX)
        err = None
        if rank == max(holder, 0):
            h = dataclasses.replace(header, body_line=first_line)
            err = count_error(buf, h, total, path=name)
        err = agree_on_error(err, comm)
        raise err
    err = weight_error(buf, header, parsed, weights, path=name, first_line=first_line)
    err = agree_on_error(err, comm)
    if err is not None:
        raise err
    src, dst, w = parsed.src, parsed.dst, parsed.weights
    top = comm.allreduce(max(int(src.max(initial=-1)), int(dst.max(initial=-1))) + 1,
                         op=MPI.MAX)
    n = graph_order(header, top)
    err = vertex_count_error(buf, header, parsed, n, top, total, path=name,
                             first_line=first_line)
    err = agree_on_error(err, comm)
    if err is not None:
        raise err
    undirected = (not header.directed) if directed is None else (not directed)
    if header.symmetric and not undirected:
        src, dst = np.concatenate([src, dst]), np.concatenate([dst, src])
        w = np.concatenate([w, w])
    return DistGraph.from_local_edges(src, dst, w, n, directed=not undirected,
                                      partition=partition, comm=comm)
