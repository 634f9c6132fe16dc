"""Parallel reading of text graph files: each rank parses its own byte range.

The body of a DIMACS ``.gr``, Matrix Market or edge-list file is cut into one
byte range per rank, each moved to the next line start; every rank reads and
parses only its range (:func:`graphpar.io_text.parse_body`), and the edges go
to the ranks that own their sources with one ``Alltoallv``. No rank ever holds
the whole graph. Compressed files (``.gz``, ``.bz2``, ``.xz``) are decompressed
as a stream by every rank, which keeps only its range; rank 0 first streams
the file once to learn its uncompressed size. ``.npz`` files are read on rank 0
and scattered.
"""

from __future__ import annotations

import dataclasses
import os

import numpy as np
from mpi4py import MPI

from graphpar.mpi.comm import agree_on_error, get_comm
from graphpar.mpi.graph import DistGraph, scatter_graph
from graphpar.mpi.partition import BlockPartition

__all__ = ["read_graph"]

_PIECE = 1 << 20


def _uncompressed_size(path) -> int:
    from graphpar.io import open_binary

    total = 0
    with open_binary(path) as f:
        while True:
            piece = f.read(_PIECE)
            if not piece:
                return total
            total += len(piece)


def _read_line_range(f, size: int, body_offset: int, a: int, b: int) -> np.ndarray:
    """Return the bytes from the first line start >= a to the first line start >= b.

    A line start is ``body_offset`` or a position just after a newline.
    ``f`` may be a decompressing stream: seeking forward then decompresses and
    discards what lies before.
    """
    if a >= b:
        return np.empty(0, dtype=np.uint8)
    probe = max(a - 1, body_offset)
    f.seek(probe)
    data = bytearray(f.read(b - probe))
    start = 0
    if a > body_offset:  # skip to just after the first newline at or after a - 1
        nl = data.find(b"\n")
        while nl < 0:
            more = f.read(_PIECE)
            if not more:
                return np.empty(0, dtype=np.uint8)
            data += more
            nl = data.find(b"\n")
        start = nl + 1
    # extend to just after the first newline at or after b - 1 (or to the end)
    end_probe = max(b - 1 - probe, start)
    nl = data.find(b"\n", end_probe)
    while nl < 0 and probe + len(data) < size:
        base = len(data)
        more = f.read(_PIECE)
        if not more:
            break
        data += more
        nl = data.find(b"\n", base)
    end = len(data) if nl < 0 else nl + 1
    if end <= start:
        return np.empty(0, dtype=np.uint8)
    return np.frombuffer(bytes(data[start:end]), dtype=np.uint8)


def read_graph(path, format: str | None = None, *, directed: bool | None = None,
               partition: BlockPartition | None = None, comm=None) -> DistGraph:
    """Read a graph file in parallel into a :class:`DistGraph`. Collective.

    Parameters
    ----------
    path : str or path-like
        The file (the same path on every rank; a shared file system).
    format : str, optional
        As :func:`graphpar.read_graph`; default from the suffix.
    directed : bool, optional
        As :func:`graphpar.read_graph` (``None`` keeps the file's meaning).
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
    graphpar.io.GraphFormatError, OSError
        The same error on every rank: the first problem in file order, naming the
        file and the line, as the serial reader does.

    Examples
    --------
    >>> dg = read_graph("roads.gr.gz")   # under mpiexec -n K  # doctest: +SKIP
    """
    from graphpar.io import detect_format, open_binary
    from graphpar.io import read_graph as serial_read
    from graphpar.io_text import body_error, count_error, read_header

    comm = get_comm(comm)
    rank, size = comm.Get_rank(), comm.Get_size()
    name = os.fspath(path)
    info, err = None, None
    try:
        fmt, comp = detect_format(path, format)
        if directed is not None and not isinstance(directed, (bool, np.bool_)):
            raise TypeError(f"directed must be True, False or None, got {directed!r}")
        if rank == 0 and fmt != "npz":
            with open_binary(path) as f:
                header = read_header(f, fmt, path=name)
            fsize = os.path.getsize(path) if comp is None else _uncompressed_size(path)
            info = (header, fsize)
    except (ValueError, TypeError, OSError, EOFError) as exc:
        err = exc
    err = agree_on_error(err, comm)
    if err is not None:
        raise err
    if fmt == "npz":
        g, err = None, None
        if rank == 0:
            try:
                g = serial_read(path, format, directed=directed)
            except (ValueError, TypeError, OSError) as exc:
                err = exc
        err = agree_on_error(err, comm)
        if err is not None:
            raise err
        return scatter_graph(g, 0, partition=partition, comm=comm)

    header, fsize = comm.bcast(info, root=0)
    body = fsize - header.body_offset
    cuts = header.body_offset + (body * np.arange(size + 1, dtype=np.int64)) // size
    a, b = int(cuts[rank]), int(cuts[rank + 1])
    err, buf = None, None
    try:
        with open_binary(path) as f:
            buf = _read_line_range(f, fsize, header.body_offset, a, b)
    except (OSError, EOFError, ValueError) as exc:
        err = exc
    err = agree_on_error(err, comm)
    if err is not None:
        raise err

    from graphpar.io_text import parse_body
    from graphpar.kernels import parse as _kp

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
    src, dst, w = parsed.src, parsed.dst, parsed.weights
    n = header.n
    if header.n is None or fmt in ("el", "wel"):
        top = max(int(src.max(initial=-1)), int(dst.max(initial=-1))) + 1
        n = max(comm.allreduce(top, op=MPI.MAX), header.n or 0)
    undirected = (not header.directed) if directed is None else (not directed)
    if header.symmetric and not undirected:
        src, dst = np.concatenate([src, dst]), np.concatenate([dst, src])
        w = np.concatenate([w, w])
    return DistGraph.from_local_edges(src, dst, w, n, directed=not undirected,
                                      partition=partition, comm=comm)
