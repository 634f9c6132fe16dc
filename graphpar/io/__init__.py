"""Reading and writing graph files: DIMACS ``.gr``, Matrix Market, edge lists, CSV and ``.npz``.

====================  ======================  =======  ===============================
format (``format=``)  suffixes                ids      default ``directed``
====================  ======================  =======  ===============================
``"gr"``              ``.gr``                 1-based  True (arcs)
``"mtx"``             ``.mtx``, ``.mm``       1-based  False for ``symmetric`` files
``"el"``              ``.el``, ``.txt``       0-based  False if a leading comment says
                                                       ``Undirected graph``, else True
``"wel"``             ``.wel``                0-based  as ``"el"``
``"npz"``             ``.npz``                CSR      as stored
``"csv"``             ``.csv``                labels   True
                                              or ids
``"tsv"``             ``.tsv``                as csv   True
====================  ======================  =======  ===============================

CSV and TSV edge lists have a header of column names; ``read_graph(path,
source="from", target="to", weight="km")`` picks the columns. Ids that are
all non-negative integers in canonical form (``7``, not ``007``) within
int64 are vertex numbers (as in ``.el`` files); otherwise every id
(``Rome``, ``007``) is a label, kept in ``g.labels`` and accepted wherever a
vertex is (``graphpar.sssp(g, "Rome")``). ``relabel=True`` numbers the ids
of a numeric edge list compactly and keeps them as labels; a list whose
largest id is far above the number of ids warns and suggests it. Labels are
stored by ``.npz`` and ``.csv``/``.tsv`` files (the CSV writer refuses a
graph that would not read back the same, such as one with a vertex in no
edge). Under MPI (:func:`graphpar.mpi.io.read_graph`) CSV and TSV files are
read by the same rules, each rank parsing its own lines.

A ``.gz``, ``.bz2`` or ``.xz`` suffix after any of these is decompressed
transparently on reading (as a stream, within
:func:`graphpar.limits.decompression_limit`) and compresses on writing. Text
files are parsed by a Numba byte scanner (:mod:`graphpar.kernels.parse`).

Public functions: :func:`read_graph`, :func:`write_graph`,
:func:`detect_format`, :func:`open_binary`, :func:`iter_decompressed`,
:func:`decompression_errors`, :func:`atomic_write` (every output file is written
beside its target and renamed over it) and :func:`check_npy`/:func:`npy_header` (the one
check of an ``.npy`` header); malformed files raise :class:`GraphFormatError`
and inputs beyond the limits :class:`LimitError` (both defined in
:mod:`graphpar.errors`, both ``ValueError``).

The implementation is private, one module per concern: ``_formats`` (format
detection, reading and writing), ``_text`` (headers and bodies of the text
formats, their error messages and writers), ``_csv`` (CSV/TSV edge lists and
the rule for numeric ids), ``_npz`` (``.npz`` graphs),
``_compression`` (compressed streams) and ``_lines`` (the one rule that cuts a
text file into per-rank line ranges, also used by the MPI readers of
:mod:`graphpar.mpi.io`).
"""

from __future__ import annotations

from graphpar.errors import GraphFormatError, LimitError
from graphpar.io._atomic import atomic_write
from graphpar.io._compression import decompression_errors, iter_decompressed, open_binary
from graphpar.io._formats import detect_format, read_graph, write_graph
from graphpar.io._npy import check_npy, npy_header

__all__ = [
    "GraphFormatError", "LimitError", "read_graph", "write_graph", "detect_format",
    "open_binary", "iter_decompressed", "decompression_errors", "atomic_write",
    "check_npy", "npy_header",
]
