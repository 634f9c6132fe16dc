"""Graphs stored as ``.npz``: the CSR arrays, every declared size checked before reading.

Written by :func:`write_npz` (``indptr``, ``indices``, ``weights``, ``n``,
``directed``, ``format_version``) and read back by :func:`read_npz` with no
pickle, checking each member's dtype, shape and size against the archive and
the limits (:mod:`graphpar.limits`) before allocating it, and a graph stored
as undirected for symmetry.
"""

from __future__ import annotations

import io as _pyio
import lzma
import os
import zipfile
import zlib

import numpy as np

from graphpar._graph import Graph, graph_from_edges
from graphpar.errors import GraphFormatError, LimitError
from graphpar.io._compression import PIECE, open_output, read_decompressed
from graphpar.io._text import bad_weight_message, first_bad_weight
from graphpar.kernels import csr as _csr
from graphpar.limits import ENV_MAX_DECOMPRESSED, check_memory, decompression_limit

__all__ = ["NPZ_VERSION", "read_npz", "write_npz"]

NPZ_VERSION = 1

_NPZ_KEYS = ("indptr", "indices", "weights", "n", "directed", "format_version")
# what each stored array must be: dtype kinds and number of dimensions (0: a scalar)
_NPZ_SPEC = {
    "indptr": ("iu", 1, "integers"), "indices": ("iu", 1, "integers"),
    "weights": ("iuf", 1, "real numbers"), "n": ("iu", 0, "an integer"),
    "directed": ("b", 0, "a boolean"), "format_version": ("iu", 0, "an integer"),
    "labels": ("iufU", 1, "vertex labels (strings or numbers)"),
}
_NPZ_OPTIONAL = ("labels",)  # a labelled graph's labels (graphpar.Graph.labels)
_ZIP_ERRORS = (
    zipfile.BadZipFile, zipfile.LargeZipFile, EOFError, zlib.error, lzma.LZMAError,
    NotImplementedError, RuntimeError,  # unsupported compression; an encrypted member
)


def read_npz(path, comp: str | None, directed: bool | None, rule: str, *,
             progress: bool | None = False) -> Graph:
    """Read a graph ``.npz``; ``comp`` is its compression suffix or None.

    ``directed``, ``rule`` (the ``weights=`` rule) and ``progress`` (the bytes
    of the arrays read) are those of :func:`graphpar.io.read_graph`.

    Examples
    --------
    >>> import os, tempfile
    >>> from graphpar import Graph
    >>> f = os.path.join(tempfile.mkdtemp(), "g.npz")
    >>> write_npz(Graph.from_edges([0], [1], [2.0]), f, None)
    >>> read_npz(f, None, None, "any").weights
    array([2.])
    """
    name = os.fspath(path)
    if comp is None:
        with open(path, "rb") as f:
            arrays = _npz_arrays(f, name, os.fstat(f.fileno()).st_size, progress)
    else:
        data = read_decompressed(path, comp, progress=progress)
        arrays = _npz_arrays(_pyio.BytesIO(data), name, data.size, progress)
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
        g = Graph(indptr, indices, weights, directed=True, labels=arrays.get("labels"))
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
    rows, cols, w = g.row_ids(), g.indices, g.weights
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


def _npz_arrays(f, name: str, archive_size: int, progress: bool | None = False) -> dict:
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
            found.update({k: members[m] for k in _NPZ_OPTIONAL
                          for m in (f"{k}.npy", k) if m in members})
            headers = {k: _npy_header(zf, found[k], k, name, archive_size) for k in found}
            total = sum(h[3] for h in headers.values())
            check_memory(total, what="the .npz arrays", source=name)
            from graphpar.progress import progress as report

            with report(total, f"reading {os.path.basename(name)}", unit="B",
                        enabled=progress) as bar:
                return {k: _npy_data(zf, found[k], headers[k], k, name, bar)
                        for k in found}
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


def _npy_data(zf, info, header, key, name, bar) -> np.ndarray:
    shape, fortran, dtype, nbytes = header
    data = bytearray(nbytes)
    view = memoryview(data)
    got = 0
    with zf.open(info) as m:
        _skip_npy_header(m)
        while got < nbytes:
            piece = m.read(min(nbytes - got, PIECE))
            if not piece:
                break
            view[got:got + len(piece)] = piece
            got += len(piece)
            bar.update(len(piece))
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


def write_npz(g: Graph, path, comp: str | None) -> None:
    """Write a validated graph as ``.npz`` (compressed as a whole when ``comp`` is a suffix).

    Examples
    --------
    >>> import os, tempfile
    >>> from graphpar import Graph
    >>> f = os.path.join(tempfile.mkdtemp(), "g.npz.gz")
    >>> write_npz(Graph.from_edges([0], [1]), f, ".gz")
    >>> read_npz(f, ".gz", None, "any").n
    2
    """
    arrays = dict(
        indptr=g.indptr, indices=g.indices, weights=g.weights, n=np.int64(g.n),
        directed=np.bool_(g.directed), format_version=np.int64(NPZ_VERSION),
    )
    if g.labels is not None:
        if g.labels.dtype == object:
            raise TypeError("the graph's labels are Python objects (such as tuples), which "
                            ".npz cannot store without pickle; give it string or integer labels "
                            "(g.with_labels(...)) first")
        arrays["labels"] = g.labels
    # open_output writes atomically; a file object, since savez would append ".npz"
    # to a name
    if comp is not None:
        mem = _pyio.BytesIO()  # zip archives need a seekable file
        np.savez(mem, **arrays)
        with open_output(path) as f:
            f.write(mem.getvalue())
    else:
        with open_output(path) as f:
            np.savez(f, **arrays)
