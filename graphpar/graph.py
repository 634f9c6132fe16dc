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

import numpy as np

from graphpar.kernels import csr as _csr

INT32_MAX = np.iinfo(np.int32).max


def is_scipy_sparse(obj) -> bool:
    """Return True for a scipy sparse matrix or array.

    scipy is not imported for the test: an object cannot be a scipy sparse
    matrix unless ``scipy.sparse`` is already loaded, and leaving it out of
    the import chain keeps a process that never uses it about 0.15 s faster
    to start.

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
        every edge in both directions; use :meth:`from_edges` or
        :meth:`from_scipy` with ``directed=False`` to build one.

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
        idx = index_dtype(n)
        src = src.astype(idx, copy=False)
        dst = dst.astype(idx, copy=False)
        if not directed:
            src, dst = np.concatenate([src, dst]), np.concatenate([dst, src])
            w = np.concatenate([w, w])
        return cls._from_coo(n, src, dst, w, directed)

    @classmethod
    def _from_coo(cls, n, rows, cols, vals, directed):
        counts = np.zeros(n, dtype=np.int64)
        _csr.count_rows(rows, n, counts)
        indptr = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(counts, out=indptr[1:])
        out_cols = np.empty(rows.size, dtype=index_dtype(n))
        out_vals = np.empty(rows.size, dtype=np.float64)
        _csr.scatter_coo(rows, cols, vals, indptr, out_cols, out_vals)
        return cls._sorted_min(indptr, out_cols, out_vals, directed, owned=True)

    @classmethod
    def _sorted_min(cls, indptr, cols, vals, directed, owned):
        """Sort rows and keep the minimum of duplicates; copies unless ``owned``."""
        if not owned:
            cols = cols.copy()
            vals = vals.copy()
        n = indptr.size - 1
        counts = np.empty(n, dtype=np.int64)
        _csr.sort_rows_keep_min(indptr, cols, vals, counts)
        new_indptr = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(counts, out=new_indptr[1:])
        if new_indptr[-1] != cols.size:
            c2 = np.empty(new_indptr[-1], dtype=cols.dtype)
            v2 = np.empty(new_indptr[-1], dtype=np.float64)
            _csr.compact_rows(indptr, new_indptr, cols, vals, c2, v2)
            cols, vals = c2, v2
        return cls(new_indptr, cols, vals, directed=directed)

    @classmethod
    def from_scipy(cls, A, directed: bool = True):
        """Build a graph from any scipy sparse matrix or array.

        Every stored entry is an edge (explicit zeros are zero-weight edges);
        duplicates keep their smallest weight. The input is not modified.

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
            Gi = Graph(A.indptr, A.indices, A.data, directed=True)
            return cls._sorted_min(Gi.indptr, Gi.indices, Gi.weights, True, owned=False)
        coo = A.tocoo()
        rows = np.asarray(coo.row).astype(index_dtype(n), copy=False)
        cols = np.asarray(coo.col).astype(index_dtype(n), copy=False)
        vals = np.asarray(coo.data).astype(np.float64, copy=False)
        if not directed:
            rows, cols = np.concatenate([rows, cols]), np.concatenate([cols, rows])
            vals = np.concatenate([vals, vals])
        return cls._from_coo(n, rows, cols, vals, directed)

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
            rows = np.repeat(
                np.arange(self.n, dtype=self.indices.dtype), np.diff(self.indptr)
            )
            self._sym = Graph.from_edges(
                rows, self.indices, self.weights, n=self.n, directed=False
            )
        return self._sym
