"""Locality-improving vertex orderings for aggregation: :func:`reorder`.

``op @ H`` gathers one row of ``H`` per stored entry. When the rows a stretch
of ``op``'s rows gathers are close together in ``H``, the gathers hit cache
and the aggregation runs faster. :func:`reorder` renumbers the vertices so
that this happens more often (reverse Cuthill-McKee, or by degree) and
returns a :class:`ReorderedOperator`, which :func:`graphpar.aggregate` takes
in place of the operator: it permutes ``H`` in, aggregates with the permuted
operator and permutes the result back, so results come in the caller's order.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import reverse_cuthill_mckee

__all__ = ["ReorderedOperator", "reorder"]

_METHODS = ("rcm", "degree")


class ReorderedOperator:
    """An operator whose vertices were renumbered by :func:`reorder`.

    ``rop.op`` is ``op[perm][:, perm]``, a :class:`~graphpar.GCNOperator`;
    new vertex ``i`` is old vertex ``perm[i]``. :func:`graphpar.aggregate`
    accepts ``rop`` wherever it accepts ``op`` and returns the same result as
    with ``op`` (up to the summation order within a row). To keep features in
    the new order across several aggregations (a training loop), use
    :meth:`permute` once, aggregate with ``rop.op`` and :meth:`unpermute` at
    the end: that saves the two row permutations per call.

    Attributes
    ----------
    op : GCNOperator
        The renumbered operator.
    perm : ndarray of int64, shape (n,)
        Old vertex number of each new vertex.
    inverse : ndarray of int64, shape (n,)
        New vertex number of each old vertex (``inverse[perm] == arange(n)``).
    method : str
        The ordering, ``"rcm"`` or ``"degree"``.

    Examples
    --------
    >>> import numpy as np
    >>> import graphpar as gp
    >>> op = gp.gcn_normalize(np.array([[0, 0, 1], [0, 0, 1], [1, 1, 0]]), dtype=np.float64)
    >>> rop = gp.reorder(op, method="degree")
    >>> rop.perm
    array([2, 0, 1])
    >>> H = np.arange(6.0).reshape(3, 2)
    >>> np.allclose(gp.aggregate(rop, H), op @ H)
    True
    """

    def __init__(self, op, perm: np.ndarray, method: str):
        self.op = op
        self.perm = perm
        self.inverse = np.empty_like(perm)
        self.inverse[perm] = np.arange(perm.size, dtype=perm.dtype)
        self.method = method

    @property
    def shape(self) -> tuple[int, int]:
        """The operator's shape, ``(n, n)``."""
        return self.op.shape

    @property
    def dtype(self) -> np.dtype:
        """The operator's value dtype."""
        return self.op.dtype

    def permute(self, H: np.ndarray) -> np.ndarray:
        """Rows of ``H`` (in the caller's order) in the new order: ``H[perm]``.

        The result is a new array starting on a 64-byte cache line, so that
        aggregating it with ``rop.op`` reads each row of 16 float32 (or a
        multiple) as whole lines.

        Examples
        --------
        >>> import numpy as np
        >>> import graphpar as gp
        >>> rop = gp.reorder(gp.gcn_normalize(np.eye(2)[::-1]), method="degree")
        >>> rop.unpermute(rop.permute(np.array([5.0, 7.0])))
        array([5., 7.])
        """
        return self._rows(H, self.perm, "H")

    def unpermute(self, Y: np.ndarray) -> np.ndarray:
        """Rows of ``Y`` (in the new order) back in the caller's order: ``Y[inverse]``.

        Examples
        --------
        >>> import numpy as np
        >>> import graphpar as gp
        >>> rop = gp.reorder(gp.gcn_normalize(np.eye(2)[::-1]), method="degree")
        >>> np.array_equal(rop.unpermute(rop.permute(np.eye(2))), np.eye(2))
        True
        """
        return self._rows(Y, self.inverse, "Y")

    def _rows(self, A, order: np.ndarray, name: str) -> np.ndarray:
        """``A[order]`` into a new array starting on a cache line (whole-line rows of H)."""
        from graphpar._gcn import empty_lines

        A = np.asarray(A)
        if A.ndim == 0 or A.shape[0] != order.size:
            raise ValueError(
                f"{name} must have {order.size} rows (one per vertex), got shape {A.shape}"
            )
        out = empty_lines(A.shape, A.dtype)
        np.take(A, order, axis=0, out=out, mode="clip")  # order is a permutation: in range
        return out

    def __repr__(self) -> str:
        n = self.shape[0]
        return f"<ReorderedOperator {n}x{n}, {self.op.nnz} stored entries, method={self.method!r}>"


def reorder(op, *, method: str = "rcm") -> ReorderedOperator:
    """Renumber the vertices of a square operator so that :func:`aggregate` gathers with locality.

    Parameters
    ----------
    op : GCNOperator or scipy sparse matrix or array, or array_like, shape (n, n)
        The operator, usually from :func:`gcn_normalize` (anything else is
        wrapped with :func:`as_operator` first).
    method : {"rcm", "degree"}, default "rcm"
        ``"rcm"``: reverse Cuthill-McKee on the pattern of ``op + op.T``
        (``scipy.sparse.csgraph.reverse_cuthill_mckee``), which puts
        neighbours at nearby numbers; ``"degree"``: by decreasing number of
        stored entries per row (ties in the old order), which packs the
        most gathered rows of ``H`` together.

    Returns
    -------
    ReorderedOperator
        Pass it to :func:`aggregate` in place of ``op``; results come back in
        the caller's vertex order.

    Raises
    ------
    TypeError
        For input :func:`as_operator` refuses.
    ValueError
        For a non-square operator or an unknown ``method``.

    Notes
    -----
    Costs, for ``n`` vertices and ``nnz`` stored entries: ``"rcm"`` takes
    O(nnz) time (scipy's breadth-first search, single-threaded) plus a
    symmetrised copy of the pattern while it runs; ``"degree"`` one stable
    sort of ``n`` counts. Both then build the permuted operator (a second
    operator of the same size as ``op``, kept in ``rop.op``) and two
    permutations of ``n`` int64 values. Each :func:`aggregate` with the
    reordered operator also permutes ``H`` and the result (two H-sized
    temporaries and two single-threaded NumPy row gathers): measured at
    2^20 vertices, f = 64, that costs more than the ordering saves, so
    passing the :class:`ReorderedOperator` to :func:`aggregate` is for
    convenience; the speed-up comes from keeping the features in the new
    order (:meth:`~ReorderedOperator.permute` once, aggregate with ``rop.op``
    many times, :meth:`~ReorderedOperator.unpermute` at the end).
    ``docs/performance.md`` has the measured times.

    Examples
    --------
    >>> import numpy as np
    >>> import graphpar as gp
    >>> A = np.zeros((5, 5))
    >>> for u, v in [(0, 3), (3, 1), (1, 4), (4, 2)]:  # a path 0-3-1-4-2
    ...     A[u, v] = A[v, u] = 1
    >>> rop = gp.reorder(gp.gcn_normalize(A, dtype=np.float64))
    >>> rop.perm  # along the path
    array([2, 4, 1, 3, 0])
    >>> H = np.arange(10.0).reshape(5, 2)
    >>> np.allclose(gp.aggregate(rop, H), gp.gcn_normalize(A, dtype=np.float64) @ H)
    True
    """
    from graphpar._gcn import GCNOperator, _new_operator, as_operator

    if method not in _METHODS:
        raise ValueError(f"method must be 'rcm' or 'degree', got {method!r}")
    if isinstance(op, ReorderedOperator):
        raise TypeError("op is already a ReorderedOperator; reorder its .op instead")
    if not isinstance(op, GCNOperator):
        op = as_operator(op)
    n, k = op.shape
    if n != k:
        raise ValueError(f"op must be square to be reordered, got shape {op.shape}")
    if method == "degree":
        perm = np.argsort(-np.diff(op.indptr.astype(np.int64)), kind="stable")
    else:
        pattern = sp.csr_matrix(
            (np.ones(op.nnz, dtype=np.int8), op.indices, op.indptr), shape=op.shape
        )
        perm = reverse_cuthill_mckee(pattern, symmetric_mode=False).astype(np.int64)
    return ReorderedOperator(_permuted(op, perm, _new_operator), perm, method)


def _permuted(op, perm: np.ndarray, make):
    """``op[perm][:, perm]`` with sorted indices, built with a few O(nnz) NumPy passes."""
    n = perm.size
    inverse = np.empty_like(perm)
    inverse[perm] = np.arange(n, dtype=perm.dtype)
    indptr = op.indptr.astype(np.int64)
    counts = np.diff(indptr)[perm]
    new_indptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(counts, out=new_indptr[1:])
    # source position of every stored entry of the new rows, row after row
    src = np.arange(new_indptr[-1], dtype=np.int64)
    src -= np.repeat(new_indptr[:-1] - indptr[perm], counts)
    idx = op.indices.dtype
    csr = sp.csr_array(
        (op.data[src], inverse[op.indices[src]].astype(idx), new_indptr.astype(idx)),
        shape=op.shape,
    )
    csr.has_sorted_indices = False
    csr.sort_indices()  # scipy sorts each row in place (compiled code)
    return make(csr.data, csr.indices, csr.indptr, op.shape)
