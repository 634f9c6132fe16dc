"""The graph container: a weighted CSR graph with canonical dtypes.

Conventions, shared with :mod:`scipy.sparse.csgraph`:

* Sparse input: every stored entry is an edge, explicit zeros included
  (they are zero-weight edges).
* Dense input: ``0``, ``inf`` and ``nan`` mean "no edge".
* Duplicate edges ``(u, v)`` collapse to one edge with the smallest weight,
  which is what a shortest-path search over all of them would use.
* ``directed=False`` stores every edge both ways (again keeping the smallest
  weight of each pair), so kernels only ever see a plain CSR.
"""

from __future__ import annotations

import sys

import numba
import numpy as np

from graphpar.kernels import csr as _csr

INT32_MAX = np.iinfo(np.int32).max


def is_scipy_sparse(obj) -> bool:
    """Return True for a scipy sparse matrix or array.

    scipy is not imported for the test: an object cannot be a scipy sparse
    matrix unless ``scipy.sparse`` is already loaded, and leaving it out of
    the import chain keeps a process that never uses it faster to start
    (see docs/performance.md).

    Examples
    --------
    >>> import scipy.sparse as sp
    >>> is_scipy_sparse(sp.eye_array(2)), is_scipy_sparse([[1.0]])
    (True, False)
    """
    sparse = sys.modules.get("scipy.sparse")
    return sparse is not None and sparse.issparse(obj)


def index_dtype(n: int) -> np.dtype:
    """Return the canonical index dtype for ``n`` vertices: int32 when it fits, else int64.

    Examples
    --------
    >>> index_dtype(10)
    dtype('int32')
    >>> index_dtype(2**40)
    dtype('int64')
    """
    return np.dtype(np.int32) if n <= INT32_MAX else np.dtype(np.int64)


class Graph:
    """A weighted graph in CSR form.

    Parameters
    ----------
    indptr : array_like of int, shape (n + 1,)
        Row offsets; stored as int64.
    indices : array_like of int, shape (nnz,)
        Column (target vertex) of each edge; stored as int32 when ``n`` fits,
        else int64.
    weights : array_like of float, shape (nnz,), optional
        Edge weights, stored as float64. Default: all ones.
    directed : bool, default True
        Whether the edges are directed. An undirected ``Graph`` must hold
        every edge in both directions with the same weight (the smallest of
        any duplicates), and is refused otherwise, naming an edge without its
        reverse; use :meth:`from_edges` or :meth:`from_scipy` with
        ``directed=False`` to build one from edges stored one way.

    The arrays are checked (monotone ``indptr``, indices in range) and copied
    only when a dtype conversion is needed; a ``Graph`` never writes to them.
    Rows need not be sorted and may hold duplicates only when built directly
    from arrays; the ``from_*`` constructors sort rows and collapse
    duplicates to their smallest weight.

    Attributes
    ----------
    n : int
        Number of vertices.
    nnz : int
        Number of stored edges.

    Examples
    --------
    >>> import numpy as np
    >>> g = Graph(np.array([0, 1, 2, 2]), np.array([1, 2]), np.array([0.5, 2.0]))
    >>> g.n, g.nnz, g.indices.dtype
    (3, 2, dtype('int32'))
    """

    __slots__ = ("indptr", "indices", "weights", "n", "directed", "_sym")

    def __init__(self, indptr, indices, weights=None, *, directed: bool = True):
        indptr = np.asarray(indptr)
        indices = np.asarray(indices)
        if indptr.ndim != 1 or indptr.size < 1:
            raise ValueError(
                f"indptr must be a 1-D array of length n + 1 >= 1, got shape {indptr.shape}"
            )
        if indices.ndim != 1:
            raise ValueError(f"indices must be a 1-D array, got shape {indices.shape}")
        for name, arr in (("indptr", indptr), ("indices", indices)):
            if arr.size and arr.dtype.kind not in "iu":
                raise TypeError(f"{name} must hold integers, got dtype {arr.dtype}")
        n = indptr.size - 1
        self.n = int(n)
        if indices.size:
            # Check the range before narrowing the dtype, so that a wide index cannot wrap.
            k = _csr.first_bad_index(indices, n)
            if k >= 0:
                u = int(np.searchsorted(indptr, k, side="right") - 1)
                raise ValueError(
                    f"edge ({u}, {int(indices[k])}) has a target outside [0, {n})"
                )
        self.indptr = indptr.astype(np.int64, copy=False)
        self.indices = indices.astype(index_dtype(n), copy=False)
        nnz = self.indices.size
        if weights is None:
            weights = np.ones(nnz)
        weights = np.asarray(weights)
        if weights.dtype.kind == "c":
            raise TypeError(f"weights must be real, got complex dtype {weights.dtype}")
        if weights.shape != (nnz,):
            raise ValueError(
                f"weights must have shape ({nnz},) like indices, got {weights.shape}"
            )
        self.weights = weights.astype(np.float64, copy=False)
        self.directed = bool(directed)
        self._sym = None
        self._check_structure()
        if not self.directed:
            self._check_symmetric()

    def _check_structure(self) -> None:
        ip = self.indptr
        if ip[0] != 0:
            raise ValueError(f"indptr[0] must be 0, got {ip[0]}")
        if ip[-1] != self.indices.size:
            raise ValueError(
                f"indptr[-1] must equal the number of edges {self.indices.size}, got {ip[-1]}"
            )
        if self.n > 0:
            steps = np.diff(ip)
            if steps.size and steps.min() < 0:
                i = int(np.argmax(steps < 0))
                raise ValueError(
                    f"indptr must be non-decreasing, but indptr[{i}]={ip[i]} > "
                    f"indptr[{i + 1}]={ip[i + 1]}"
                )

    def _check_symmetric(self) -> None:
        """Refuse ``directed=False`` over arrays that do not hold every edge both ways.

        Code that receives an undirected graph trusts it to be symmetric (it is
        not symmetrised again), so a wrong flag would silently give wrong results.
        Compares the canonical rows with those of the transpose: two CSR builds.
        """
        rows = self.row_ids()
        if _csr.first_unsorted_row(self.indptr, self.indices) < 0:
            a = self
        else:
            a = graph_from_edges(rows, self.indices, self.weights, self.n, True)
        t = graph_from_edges(self.indices, rows, self.weights, self.n, True)
        if (np.array_equal(a.indptr, t.indptr) and np.array_equal(a.indices, t.indices)
                and np.array_equal(a.weights, t.weights, equal_nan=True)):
            return
        # the first row where the two differ: rows before the first length
        # difference sit at the same positions in both
        d = np.flatnonzero(a.indptr != t.indptr)
        u = int(d[0]) - 1 if d.size else self.n
        p = int(a.indptr[u]) if d.size else a.nnz
        same = (a.indices[:p] == t.indices[:p]) & (
            (a.weights[:p] == t.weights[:p])
            | (np.isnan(a.weights[:p]) & np.isnan(t.weights[:p])))
        if not same.all():
            u = int(np.searchsorted(a.indptr, int(np.argmin(same)), side="right") - 1)
        ka, ea = int(a.indptr[u]), int(a.indptr[u + 1])
        kt, et = int(t.indptr[u]), int(t.indptr[u + 1])
        while ka < ea and kt < et and a.indices[ka] == t.indices[kt] and (
                a.weights[ka] == t.weights[kt]
                or (np.isnan(a.weights[ka]) and np.isnan(t.weights[kt]))):
            ka, kt = ka + 1, kt + 1
        if ka < ea and (kt == et or a.indices[ka] < t.indices[kt]):
            edge = (u, int(a.indices[ka]), float(a.weights[ka]))  # (u, v) with no (v, u)
        elif kt < et and (ka == ea or t.indices[kt] < a.indices[ka]):
            edge = (int(t.indices[kt]), u, float(t.weights[kt]))  # (v, u) with no (u, v)
        else:  # both ways, different weights
            v = int(a.indices[ka])
            raise ValueError(
                f"directed=False, but edge ({u}, {v}) has weight {float(a.weights[ka])} and "
                f"its reverse ({v}, {u}) weight {float(t.weights[kt])}; an undirected Graph "
                "stores every edge both ways with one weight (build it with "
                "Graph.from_edges(..., directed=False), which keeps the smaller)"
            )
        x, y, w = edge
        raise ValueError(
            f"directed=False, but edge ({x}, {y}, {w}) has no reverse edge ({y}, {x}); an "
            "undirected Graph stores every edge both ways (build it with "
            "Graph.from_edges(..., directed=False), or pass directed=True)"
        )

    @property
    def nnz(self) -> int:
        """Number of stored edges."""
        return int(self.indices.size)

    @property
    def shape(self) -> tuple[int, int]:
        """``(n, n)``, as for a scipy sparse matrix."""
        return (self.n, self.n)

    def __repr__(self) -> str:
        kind = "directed" if self.directed else "undirected"
        return f"<Graph: {self.n} vertices, {self.nnz} stored edges, {kind}>"

    # ------------------------------------------------------------------ builders
    @classmethod
    def from_edges(cls, src, dst, weights=None, n: int | None = None, directed: bool = True):
        """Build a graph from edge arrays.

        Parameters
        ----------
        src, dst : array_like of int, shape (m,)
            Edge endpoints, 0-based.
        weights : array_like of float, shape (m,), optional
            Edge weights; default all ones.
        n : int, optional
            Number of vertices; default ``max(src, dst) + 1`` (0 with no edges).
        directed : bool, default True
            With ``False`` every edge is stored both ways.

        Returns
        -------
        Graph
            Rows sorted, duplicate edges collapsed to their smallest weight.

        Examples
        --------
        >>> g = Graph.from_edges([0, 0, 1], [1, 1, 2], [3.0, 2.0, 1.0])
        >>> g.to_scipy().toarray()
        array([[0., 2., 0.],
               [0., 0., 1.],
               [0., 0., 0.]])
        """
        src = np.asarray(src)
        dst = np.asarray(dst)
        if src.ndim != 1 or dst.shape != src.shape:
            raise ValueError(
                f"src and dst must be 1-D arrays of one length, got shapes {src.shape} "
                f"and {dst.shape}"
            )
        for name, arr in (("src", src), ("dst", dst)):
            if arr.size and arr.dtype.kind not in "iu":
                raise TypeError(f"{name} must hold integers, got dtype {arr.dtype}")
        if weights is None:
            w = np.ones(src.size)
        else:
            w = np.asarray(weights)
            if w.dtype.kind == "c":
                raise TypeError(f"weights must be real, got complex dtype {w.dtype}")
            if w.shape != src.shape:
                raise ValueError(
                    f"weights must have shape {src.shape} like src, got {w.shape}"
                )
            w = w.astype(np.float64, copy=False)
        if n is None:
            n = int(max(src.max(initial=-1), dst.max(initial=-1))) + 1
        n = int(n)
        if n < 0:
            raise ValueError(f"n must be >= 0, got {n}")
        for name, arr in (("src", src), ("dst", dst)):
            if arr.size:
                bad = np.flatnonzero((arr < 0) | (arr >= n))
                if bad.size:
                    k = int(bad[0])
                    raise ValueError(
                        f"edge {k} ({int(src[k])}, {int(dst[k])}): {name} vertex "
                        f"{int(arr[k])} is outside [0, {n})"
                    )
        return graph_from_edges(src, dst, w, n, directed)

    @classmethod
    def from_scipy(cls, A, directed: bool = True):
        """Build a graph from any scipy sparse matrix or array.

        Every stored entry is an edge (explicit zeros are zero-weight edges);
        duplicates keep their smallest weight. The input is not modified. With
        ``directed=True`` a CSR input whose rows are already sorted and free of
        duplicates is copied rather than rebuilt.

        Parameters
        ----------
        A : scipy sparse matrix or array, shape (n, n)
            Entry ``(u, v)`` is the edge ``u -> v``.
        directed : bool, default True
            With ``False`` every edge is stored both ways.

        Returns
        -------
        Graph

        Examples
        --------
        >>> import scipy.sparse as sp
        >>> A = sp.coo_array(([4.0, 1.0, 0.0], ([0, 0, 1], [1, 1, 0])), shape=(2, 2))
        >>> g = Graph.from_scipy(A)
        >>> g.weights
        array([1., 0.])
        """
        if not is_scipy_sparse(A):
            raise TypeError(f"expected a scipy sparse matrix or array, got {type(A).__name__}")
        if A.ndim != 2 or A.shape[0] != A.shape[1]:
            raise ValueError(f"graph must be a square (n, n) matrix, got shape {A.shape}")
        if A.dtype.kind == "c":
            raise TypeError(f"graph weights must be real, got complex dtype {A.dtype}")
        n = A.shape[0]
        if A.format == "csr" and directed:
            g = Graph(A.indptr, A.indices, A.data, directed=True)
            if _csr.first_unsorted_row(g.indptr, g.indices) < 0:
                # Already canonical: no build, but copy what still shares A's buffers,
                # as the builder would, so that changing A later cannot change the graph.
                for name, base in (("indptr", A.indptr), ("indices", A.indices),
                                   ("weights", A.data)):
                    if np.may_share_memory(getattr(g, name), base):
                        setattr(g, name, getattr(g, name).copy())
                return g
            return graph_from_edges(g.row_ids(), g.indices, g.weights, n, True)
        coo = A.tocoo()
        return graph_from_edges(coo.row, coo.col, coo.data, n, directed)

    @classmethod
    def from_dense(cls, M, directed: bool = True):
        """Build a graph from a dense (n, n) array: 0, inf and nan mean "no edge".

        Examples
        --------
        >>> import numpy as np
        >>> Graph.from_dense(np.array([[0, 2], [np.inf, 0]])).nnz
        1
        """
        M = np.asarray(M)
        if M.ndim != 2 or M.shape[0] != M.shape[1]:
            raise ValueError(f"graph must be a square (n, n) matrix, got shape {M.shape}")
        if M.dtype.kind == "c":
            raise TypeError(f"graph weights must be real, got complex dtype {M.dtype}")
        if M.dtype.kind not in "biuf":
            raise TypeError(f"graph must hold numbers, got dtype {M.dtype}")
        Mf = M.astype(np.float64, copy=False)
        mask = (Mf != 0) & np.isfinite(Mf)
        rows, cols = np.nonzero(mask)
        return cls.from_edges(rows, cols, Mf[rows, cols], n=M.shape[0], directed=directed)

    # ------------------------------------------------------------------ views
    def to_scipy(self):
        """Return the graph as a ``scipy.sparse.csr_array`` (no copy of the arrays).

        Examples
        --------
        >>> Graph.from_edges([0], [1]).to_scipy().shape
        (2, 2)
        """
        import scipy.sparse as sp

        return sp.csr_array((self.weights, self.indices, self.indptr), shape=(self.n, self.n))

    def symmetrized(self) -> Graph:
        """Return the undirected closure: every edge both ways, smallest weight per pair.

        An undirected graph is returned as it is; the result is cached.

        Examples
        --------
        >>> Graph.from_edges([0], [1], [2.0]).symmetrized().nnz
        2
        """
        if not self.directed:
            return self
        if self._sym is None:
            self._sym = graph_from_edges(
                self.row_ids(), self.indices, self.weights, self.n, directed=False
            )
        return self._sym

    def row_ids(self) -> np.ndarray:
        """The source vertex of every stored edge (the COO row array), in the index dtype.

        Examples
        --------
        >>> Graph.from_edges([0, 0, 1], [1, 2, 2]).row_ids()
        array([0, 0, 1], dtype=int32)
        """
        return np.repeat(np.arange(self.n, dtype=self.indices.dtype), np.diff(self.indptr))


def graph_from_edges(src, dst, weights, n: int, directed: bool) -> Graph:
    """Build a :class:`Graph` from trusted 0-based edge arrays: graphpar's one CSR builder.

    :meth:`Graph.from_edges`, :meth:`Graph.from_scipy`, :meth:`Graph.from_dense`,
    :meth:`Graph.symmetrized`, the readers and the generators all build
    through it. Same conventions: rows sorted by column, duplicate edges
    collapsed to their smallest weight (a NaN among them kept, so a validator
    still sees it), ``directed=False`` storing every edge both ways. Nothing
    is checked: the ids must lie in ``[0, n)`` (the callers guarantee it).
    The inputs are not modified and may be read-only.

    No sort: two parallel counting passes, first scattering the edges into
    the transpose (rows = targets), then transposing back, which visits the
    sources in order and so emits every row sorted. Each thread owns a block
    of rows holding about the same number of entries; the duplicates of an
    edge meet in a fixed order whatever the blocks (the edges in input order,
    then the reverses), so the result, down to which of tied weights such as
    ``0.0`` and ``-0.0`` is kept, does not depend on the number of Numba threads.

    Parameters
    ----------
    src, dst : array_like of int, shape (m,)
        Edge endpoints in ``[0, n)``.
    weights : array_like of float, shape (m,)
        Edge weights.
    n : int
        Number of vertices.
    directed : bool
        With ``False`` every edge is also stored reversed.

    Returns
    -------
    Graph

    Examples
    --------
    >>> import numpy as np
    >>> g = graph_from_edges(np.array([0, 0]), np.array([1, 1]), np.array([3.0, 2.0]), 2, False)
    >>> g.indptr, g.indices, g.weights
    (array([0, 1, 2]), array([1, 0], dtype=int32), array([2., 2.]))
    """
    idx = index_dtype(n)
    src = np.ascontiguousarray(src, dtype=idx)
    dst = np.ascontiguousarray(dst, dtype=idx)
    w = np.ascontiguousarray(weights, dtype=np.float64)
    both = not directed
    parts = max(1, min(numba.get_num_threads(), n))
    # Pass 1 fills the transpose (for an undirected graph the same multiset, so
    # the same offsets); pass 2 transposes it back with every row sorted.
    indptr_t = _row_offsets(dst, src, both, n)
    nnz = int(indptr_t[-1])
    cols_t = np.empty(nnz, dtype=idx)
    vals_t = np.empty(nnz, dtype=np.float64)
    _csr.scatter_rows(dst, src, w, both, indptr_t, _row_blocks(indptr_t, parts), cols_t, vals_t)
    indptr = indptr_t if both else _row_offsets(src, dst, False, n)
    cols = np.empty(nnz, dtype=idx)
    vals = np.empty(nnz, dtype=np.float64)
    _csr.transpose_rows(indptr_t, cols_t, vals_t, indptr, _row_blocks(indptr, parts), cols, vals)
    del cols_t, vals_t
    counts = np.empty(n, dtype=np.int64)
    _csr.dedupe_sorted_rows(indptr, cols, vals, counts)
    new_indptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(counts, out=new_indptr[1:])
    if new_indptr[-1] != nnz:
        c2 = np.empty(new_indptr[-1], dtype=idx)
        v2 = np.empty(new_indptr[-1], dtype=np.float64)
        _csr.compact_rows(indptr, new_indptr, cols, vals, c2, v2)
        cols, vals = c2, v2
    g = Graph(new_indptr, cols, vals)
    g.directed = bool(directed)  # symmetric by construction: skip the check of __init__
    return g


def _row_offsets(rows, other, both, n):
    """CSR offsets for edges ``rows -> other`` (with ``both`` also ``other -> rows``)."""
    counts = np.zeros(n, dtype=np.int64)
    _csr.count_degrees(rows, other, both, counts)
    indptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(counts, out=indptr[1:])
    return indptr


def _row_blocks(indptr, parts):
    """Row boundaries of ``parts`` blocks holding about the same number of entries."""
    n = indptr.size - 1
    bounds = np.searchsorted(indptr, np.linspace(0, indptr[-1], parts + 1), side="left")
    bounds[0], bounds[-1] = 0, n
    return np.maximum.accumulate(bounds).astype(np.int64)
