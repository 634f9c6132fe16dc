"""GCN aggregation: the normalised operator ``D^-1/2 (A+I) D^-1/2`` and ``op @ H``.

:func:`gcn_normalize` builds the operator as a :class:`GCNOperator`, a
``scipy.sparse.csr_array`` that also keeps what :func:`aggregate` needs for
the backward pass (the CSR of its transpose, computed once on first use, or
the operator itself when it is symmetric). Its arrays are read-only, so that
what it caches cannot go stale. :func:`aggregate` computes ``op @ H`` or
``op.T @ H`` with a row-parallel Numba kernel and no atomics.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from graphpar._graph import Graph
from graphpar._validation import check_csr_arrays, validate_graph
from graphpar.kernels import aggregate as _kernel

__all__ = ["GCNOperator", "aggregate", "as_operator", "empty_lines", "gcn_normalize"]

_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))
# Below this many (stored entries + rows) x width, one thread is faster than
# waking the others (and, on a busy machine, waiting for them to be scheduled).
SERIAL_WORK = 1 << 20
# numpy aligns large arrays to 16 bytes, so a 256-byte row of H (64 float32) spans five
# 64-byte cache lines instead of four: 25% more random reads in the gathers (and a
# 64-byte row two lines instead of one). aggregate does not copy H to fix this: a fresh
# aligned copy per call (page faults included) cost about what it saved
# (benchmarks/aggregate.py --locality), and the kernel prefetches the extra line. What
# graphpar allocates itself (aggregate's result, the GCN layers' operands) starts on a
# line (empty_lines); callers that aggregate the same features many times can keep them
# in a line_aligned buffer.
CACHE_LINE = 64


class GCNOperator(sp.csr_array):
    """A ``csr_array`` that keeps its transpose and kernel-ready arrays for :func:`aggregate`.

    It behaves like a ``scipy.sparse.csr_array`` whose ``data``, ``indices``
    and ``indptr`` are read-only. :func:`aggregate` checks it once (finite
    values, indices in range) and keeps the arrays its kernel reads and, with
    ``transpose=True``, the CSR of ``op.T`` (or the operator itself when it is
    symmetric). Read-only arrays make those caches impossible to go stale: an
    in-place change such as ``op.data *= 2`` raises numpy's ``ValueError:
    output array is read-only`` instead of leaving ``op.T`` behind. To change
    the values, assign new arrays (``op.data = op.data * 2``): the next
    :func:`aggregate` sees the new arrays, takes read-only copies of them,
    checks them and rebuilds what it keeps, so its results always equal
    scipy's ``op @ H`` and ``op.T @ H``. Operators from
    :func:`gcn_normalize` and :func:`as_operator` are read-only from the start;
    a ``GCNOperator`` made otherwise (by scipy arithmetic, say) becomes
    read-only on its first use by :func:`aggregate`.

    Examples
    --------
    >>> import numpy as np
    >>> op = as_operator(np.array([[0.0, 2.0], [0.0, 0.0]]))
    >>> aggregate(op, np.ones((2, 1)), transpose=True).ravel()
    array([0., 2.])
    >>> op.data.flags.writeable
    False
    >>> op.data = op.data * 2  # a new array: the transpose is rebuilt
    >>> aggregate(op, np.ones((2, 1)), transpose=True).ravel()
    array([0., 4.])
    """

    def __getstate__(self):
        # A copy or an unpickled operator gets its own arrays: it rebuilds its caches.
        state = dict(self.__dict__)
        state.pop("_gp", None)
        return state

    def _gp_cache(self) -> dict:
        """The kernel arrays kept for :func:`aggregate`, rebuilt when the arrays were replaced."""
        cache = self.__dict__.get("_gp")
        if cache is None or not _is_current(self, cache):
            cache = _freeze(self, owned=False)
        return cache


_PARTS = ("indptr", "indices", "data")


def _freeze(op: GCNOperator, *, owned: bool) -> dict:
    """Give ``op`` read-only views of private arrays; return its (empty) cache.

    With ``owned``, the arrays are new and nobody else holds them, so they are
    kept; otherwise they are copied, since the caller (or the array ``op``
    was built from) could still write to them. The kernel reads the private,
    writeable arrays (one Numba specialisation); users see read-only views.
    """
    private = []
    for name in _PARTS:
        arr = np.asarray(getattr(op, name))
        if not owned:
            arr = arr.copy()
        view = arr.view()
        view.flags.writeable = False
        setattr(op, name, view)
        private.append(arr)
    cache = {"source": (op.indptr, op.indices, op.data, op.shape), "arrays": tuple(private)}
    op.__dict__["_gp"] = cache
    return cache


def _is_current(op: GCNOperator, cache: dict) -> bool:
    indptr, indices, data, shape = cache["source"]
    return (
        op.indptr is indptr and op.indices is indices and op.data is data
        and op.shape == shape
    )


def _new_operator(data, indices, indptr, shape) -> GCNOperator:
    """A :class:`GCNOperator` over new arrays that nobody else holds (frozen, not copied)."""
    op = GCNOperator((data, indices, indptr), shape=shape)
    _freeze(op, owned=True)
    return op


def as_operator(A, *, dtype=None) -> GCNOperator:
    """Wrap a matrix as a :class:`GCNOperator`, without normalising it.

    Use it to give :func:`aggregate` a cached transpose for an operator you
    built yourself. Duplicates are kept (``op @ H`` sums them, as scipy does).
    The operator holds read-only copies of ``A``'s arrays: changing ``A``
    later does not change it (see :class:`GCNOperator`).

    Parameters
    ----------
    A : scipy sparse matrix or array, or array_like, shape (m, k)
        The operator; may be rectangular.
    dtype : {numpy.float32, numpy.float64}, optional
        Value dtype; default: ``A``'s dtype when it is one of those, else float64.

    Returns
    -------
    GCNOperator
        ``A`` itself when it is a :class:`GCNOperator` of that dtype, else a
        new operator with read-only copies of ``A``'s arrays.

    Examples
    --------
    >>> import scipy.sparse as sp
    >>> as_operator(sp.eye_array(3, format="coo")).format
    'csr'
    """
    if isinstance(A, GCNOperator) and (dtype is None or A.dtype == np.dtype(dtype)):
        return A
    if not sp.issparse(A):
        arr = np.asarray(A)
        if arr.ndim != 2 or arr.dtype.kind not in "biuf":
            raise TypeError(
                f"A must be a 2-D real array or a scipy sparse matrix, got "
                f"{type(A).__name__} with shape {arr.shape} and dtype {arr.dtype}"
            )
        A = sp.csr_array(arr)
    if A.dtype.kind not in "biuf":
        raise TypeError(f"A must hold real numbers, got dtype {A.dtype}")
    if dtype is None:
        dtype = A.dtype if A.dtype in _FLOATS else np.float64
    dtype = _float_dtype(dtype, "dtype")
    csr = A.tocsr() if A.format != "csr" else A
    return _new_operator(
        np.array(csr.data, dtype=dtype), np.array(csr.indices), np.array(csr.indptr), csr.shape
    )


def _float_dtype(dtype, name: str) -> np.dtype:
    try:
        dt = np.dtype(dtype)
    except TypeError as exc:
        raise TypeError(f"{name} must be numpy.float32 or numpy.float64, got {dtype!r}") from exc
    if dt not in _FLOATS:
        raise TypeError(f"{name} must be numpy.float32 or numpy.float64, got {dt}")
    return dt


def gcn_normalize(
    csgraph,
    *,
    self_loops: bool = True,
    norm: str | None = "sym",
    dtype=np.float32,
) -> GCNOperator:
    """Return the normalised GCN propagation operator of a graph.

    Parameters
    ----------
    csgraph : Graph, scipy sparse matrix or array, or array_like, shape (n, n)
        The graph; entry ``(u, v)`` with weight ``w`` is an edge. Sparse
        input: duplicate entries are summed first, as scipy does (a
        :class:`~graphpar.Graph` has none: it keeps the smallest). Dense
        input: 0, inf and nan mean "no edge". Weights must be finite and
        non-negative. The input is never modified.
    self_loops : bool, default True
        Add the identity: ``A + I`` (an existing self-loop gets 1 added).
    norm : {"sym", "row", None}, default "sym"
        ``"sym"``: ``D^-1/2 (A+I) D^-1/2``; ``"row"``: ``D^-1 (A+I)``;
        ``None``: ``A+I`` unscaled. ``D`` holds the row sums (weighted out
        degrees) of ``A+I``. A vertex with degree 0 gets a zero row and
        column, never a division by zero.
    dtype : {numpy.float32, numpy.float64}, default numpy.float32
        Dtype of the operator's values (scaling is computed in float64).

    Returns
    -------
    GCNOperator
        A ``scipy.sparse.csr_array`` (subclass) with sorted indices, no
        duplicates and read-only arrays, which :func:`aggregate` uses with a
        cached transpose.

    Raises
    ------
    TypeError
        For an unsupported input or ``dtype``.
    ValueError
        For a non-square graph, a negative, infinite or NaN weight, or an
        unknown ``norm``.

    Examples
    --------
    >>> import numpy as np
    >>> op = gcn_normalize(np.array([[0, 1], [1, 0]]), dtype=np.float64)
    >>> op.toarray()
    array([[0.5, 0.5],
           [0.5, 0.5]])
    >>> gcn_normalize(np.array([[0, 1], [0, 0]]), norm="row", self_loops=False).toarray()
    array([[0., 1.],
           [0., 0.]], dtype=float32)
    """
    if norm not in ("sym", "row", None):
        raise ValueError(f"norm must be 'sym', 'row' or None, got {norm!r}")
    dtype = _float_dtype(dtype, "dtype")
    if sp.issparse(csgraph) and not isinstance(csgraph, Graph):
        if csgraph.dtype.kind == "c":
            raise TypeError(f"csgraph weights must be real, got complex dtype {csgraph.dtype}")
        if csgraph.ndim != 2 or csgraph.shape[0] != csgraph.shape[1]:
            raise ValueError(f"csgraph must be a square (n, n) matrix, got shape {csgraph.shape}")
        summed = sp.csr_array(csgraph, copy=True)  # our copy: sum_duplicates works in place
        summed.sum_duplicates()
        csgraph = summed
    g = validate_graph(csgraph, directed=True, weights="finite", name="csgraph")
    n = g.n
    A = g.to_scipy()
    if self_loops:
        A = A + sp.eye_array(n, dtype=np.float64, format="csr")
    A = sp.csr_array(A)
    A.sum_duplicates()
    A.sort_indices()
    data = np.asarray(A.data, dtype=np.float64)
    if norm is not None:
        rows = np.repeat(np.arange(n), np.diff(A.indptr))
        deg = np.bincount(rows, weights=data, minlength=n)
        scale = np.zeros(n, dtype=np.float64)
        pos = deg > 0
        if norm == "sym":
            scale[pos] = 1.0 / np.sqrt(deg[pos])
            data = data * scale[rows] * scale[A.indices]
        else:
            scale[pos] = 1.0 / deg[pos]
            data = data * scale[rows]
    # int32 indices and offsets whenever they fit: less memory traffic in the kernel
    idx = np.int32 if max(n, A.nnz) <= np.iinfo(np.int32).max else np.int64
    return _new_operator(data.astype(dtype), A.indices.astype(idx), A.indptr.astype(idx), (n, n))


# ---------------------------------------------------------------------- aggregate
def _kernel_arrays(indptr, indices, data, shape, dtype: np.dtype, name: str):
    """(indptr, indices, data) of a CSR matrix, checked, data in ``dtype``."""
    indptr = np.asarray(indptr)
    indices = np.asarray(indices)
    if indices.dtype not in (np.int32, np.int64):
        indices = indices.astype(np.int64)
    if indptr.dtype not in (np.int32, np.int64):
        indptr = indptr.astype(np.int64)
    check_csr_arrays(indptr, indices, np.asarray(data), shape, name)
    return indptr, indices, np.asarray(data).astype(dtype, copy=False)


def _operator_arrays(op, dtype: np.dtype, transpose: bool):
    """Kernel arrays for ``op`` (or its transpose), cached on a :class:`GCNOperator`."""
    if isinstance(op, GCNOperator):
        cache = op._gp_cache()
        key = (dtype.str, transpose)
        if key not in cache:
            indptr, indices, data = cache["arrays"]
            if not transpose:
                cache[key] = _kernel_arrays(indptr, indices, data, op.shape, dtype, "op")
            else:
                fwd = _operator_arrays(op, dtype, False)
                csr = sp.csr_array((data, indices, indptr), shape=op.shape)
                t = csr.T.tocsr()
                t.sum_duplicates()
                if (
                    op.shape[0] == op.shape[1]
                    and csr.has_canonical_format
                    and t.nnz == csr.nnz
                    and np.array_equal(t.indptr, indptr)
                    and np.array_equal(t.indices, indices)
                    and np.array_equal(t.data, data)
                ):
                    cache[key] = fwd  # symmetric: op.T is op
                else:
                    cache[key] = _kernel_arrays(
                        t.indptr, t.indices, t.data, t.shape, dtype, "op.T"
                    )
        return cache[key]
    csr = op if op.format == "csr" else op.tocsr()
    if transpose:
        csr = csr.T.tocsr()
    return _kernel_arrays(
        csr.indptr, csr.indices, csr.data, csr.shape, dtype, "op.T" if transpose else "op"
    )


def aggregate(op, H, *, transpose: bool = False, out: np.ndarray | None = None) -> np.ndarray:
    """Compute ``op @ H`` (or ``op.T @ H``) with a parallel Numba kernel.

    Parameters
    ----------
    op : GCNOperator, ReorderedOperator or scipy sparse matrix or array, shape (m, k)
        The operator, usually from :func:`gcn_normalize`; may be rectangular.
        A :class:`~graphpar.ReorderedOperator` (from :func:`~graphpar.reorder`)
        gives the result in the caller's vertex order.
        A :class:`GCNOperator` is checked once and keeps its transpose (its
        arrays are read-only; assigning new ones makes it check and rebuild). Any
        other scipy sparse input is converted to CSR and checked (finite
        values, indices in range) on every call, and with ``transpose=True``
        its transpose is rebuilt on every call (O(nnz)); wrap it once with
        :func:`as_operator` to keep both.
    H : ndarray of float32 or float64, shape (k, w) or (k,)
        Features. A non-contiguous ``H`` is copied to C order first.
    transpose : bool, default False
        Compute ``op.T @ H`` (then ``H`` has ``m`` rows), the backward of a
        layer on a directed graph, from the cached CSR of ``op.T``: no atomics
        and, for a :class:`GCNOperator`, no per-call transpose.
    out : ndarray, optional
        Where to write the result: C-contiguous, writeable, not overlapping
        ``H``, with the result's shape and dtype.

    Returns
    -------
    ndarray
        ``op @ H``, of dtype ``numpy.result_type(op.dtype, H.dtype)`` (float32
        only when both are float32), accumulated in that dtype; ``out`` when given,
        else a new array starting on a 64-byte cache line (see :func:`empty_lines`).

    Raises
    ------
    TypeError
        For a non-sparse ``op``, a non-float ``H`` or an ``out`` of the wrong dtype.
    ValueError
        For mismatched shapes, a non-contiguous or overlapping ``out``, or a
        NaN or infinite value in the operator.

    Examples
    --------
    >>> import numpy as np
    >>> op = gcn_normalize(np.array([[0, 1], [0, 0]]), dtype=np.float64)
    >>> aggregate(op, np.array([[1.0], [2.0]]))
    array([[1.91421356],
           [2.        ]])
    """
    from graphpar._reorder import ReorderedOperator

    if isinstance(op, ReorderedOperator):
        return _aggregate_reordered(op, H, transpose, out)
    if not sp.issparse(op):
        raise TypeError(
            f"op must be a scipy sparse matrix or array (e.g. from gcn_normalize), "
            f"got {type(op).__name__}"
        )
    if op.ndim != 2:
        raise ValueError(f"op must be 2-D, got shape {op.shape}")
    if op.dtype.kind not in "biuf":
        raise TypeError(f"op must hold real numbers, got dtype {op.dtype}")
    m, k = op.shape[::-1] if transpose else op.shape
    _check_features(H, m, k, "op.T" if transpose else "op")
    vector = H.ndim == 1
    H2 = H.reshape(k, 1) if vector else H
    dtype = np.result_type(op.dtype, H.dtype)
    if dtype not in _FLOATS:
        dtype = np.dtype(np.float64)
    H2 = np.ascontiguousarray(H2, dtype=dtype)
    w = H2.shape[1]
    shape = (m,) if vector else (m, w)
    if out is None:
        res = empty_lines((m, w), dtype)
    else:
        _check_out(out, shape, dtype, H2)
        res = out.reshape(m, w)
    indptr, indices, data = _operator_arrays(op, dtype, transpose)
    if (indices.size + m) * max(w, 1) < SERIAL_WORK:
        _kernel.spmm_rows(indptr, indices, data, H2, res, 0, m)
    else:
        _kernel.spmm(indptr, indices, data, H2, res)
    return res.reshape(shape) if out is None else out


def _check_features(H, m: int, k: int, what: str) -> None:
    """Raise the user error for an ``H`` that cannot multiply ``what`` of shape ``(m, k)``."""
    if not isinstance(H, np.ndarray):
        raise TypeError(f"H must be a numpy array of float32 or float64, got {type(H).__name__}")
    if H.dtype not in _FLOATS:
        raise TypeError(f"H must have dtype float32 or float64, got {H.dtype}")
    if H.ndim not in (1, 2):
        raise ValueError(f"H must be 1-D or 2-D, got shape {H.shape}")
    if H.shape[0] != k:
        raise ValueError(
            f"shape mismatch: {what} has shape {(m, k)} but H has shape {H.shape} "
            f"(H needs {k} rows)"
        )


def _check_out(out, shape: tuple, dtype: np.dtype, H: np.ndarray) -> None:
    """Raise the user error for an ``out`` that cannot hold the result."""
    if not isinstance(out, np.ndarray):
        raise TypeError(f"out must be a numpy array, got {type(out).__name__}")
    if out.dtype != dtype:
        raise TypeError(f"out must have dtype {dtype} (the result's), got {out.dtype}")
    if out.shape != shape:
        raise ValueError(f"out must have shape {shape}, got {out.shape}")
    if not out.flags.c_contiguous:
        raise ValueError("out must be C-contiguous")
    if not out.flags.writeable:
        raise ValueError("out must be writeable")
    if np.may_share_memory(out, H):
        raise ValueError("out must not overlap H")


def _aggregate_reordered(rop, H, transpose: bool, out):
    """:func:`aggregate` with a :class:`~graphpar.ReorderedOperator`: permute in, undo out."""
    n = rop.shape[0]
    _check_features(H, n, n, "op.T" if transpose else "op")
    Y = aggregate(rop.op, rop.permute(H), transpose=transpose)
    if out is None:
        return rop.unpermute(Y)
    _check_out(out, Y.shape, Y.dtype, H)
    np.take(Y, rop.inverse, axis=0, out=out)
    return out


def empty_lines(shape: tuple, dtype) -> np.ndarray:
    """An uninitialised C-contiguous array whose first byte starts a 64-byte cache line.

    Like ``numpy.empty(shape, dtype)`` (which starts large arrays 16 bytes into a
    line), at the cost of at most 64 more bytes. When the rows of a 2-D result
    are a whole number of lines (16 float32 or 8 float64 values, or a multiple),
    every row then lies on whole lines, so :func:`aggregate` gathering the rows of
    an array made here reads each row as the fewest lines.

    Examples
    --------
    >>> import numpy as np
    >>> A = empty_lines((1000, 16), np.float32)
    >>> A.ctypes.data % 64, A.shape, A.dtype, A.flags.c_contiguous
    (0, (1000, 16), dtype('float32'), True)
    """
    dtype = np.dtype(dtype)
    nbytes = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
    buf = np.empty(nbytes + CACHE_LINE, dtype=np.uint8)
    start = -buf.ctypes.data % CACHE_LINE
    return buf[start:start + nbytes].view(dtype).reshape(shape)


def line_aligned(H: np.ndarray) -> np.ndarray:
    """``H`` itself, or a copy starting on a cache line when its rows are whole lines.

    A C-contiguous 2-D ``H`` whose rows are a multiple of 64 bytes but whose
    first byte is not on a 64-byte boundary is copied into a buffer that is,
    so that every row is read as whole lines (see ``CACHE_LINE``). Costs one
    H-sized temporary and one streaming copy.

    Examples
    --------
    >>> import numpy as np
    >>> H = np.ones((4, 16), dtype=np.float32)
    >>> line_aligned(H).ctypes.data % 64
    0
    >>> np.array_equal(line_aligned(H), H)
    True
    """
    row = H.shape[1] * H.itemsize if H.ndim == 2 else 0
    if row == 0 or row % CACHE_LINE or H.ctypes.data % CACHE_LINE == 0:
        return H
    A = empty_lines(H.shape, H.dtype)
    np.copyto(A, H)
    return A
