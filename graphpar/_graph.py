"""The graph container: a weighted CSR graph with canonical dtypes.

Conventions, shared with :mod:`scipy.sparse.csgraph`:

* Sparse input: every stored entry is an edge, explicit zeros included
  (they are zero-weight edges).
* Dense input: ``0``, ``inf`` and ``nan`` mean "no edge".
* Duplicate edges ``(u, v)`` collapse to one edge with the smallest weight,
  which is what a shortest-path search over all of them would use.
* ``directed=False`` stores every edge both ways (again keeping the smallest
  weight of each pair), so kernels only ever see a plain CSR.

Vertices are numbered ``0 .. n-1``. A graph may also carry **labels**, one
distinct name per vertex (strings, integers, or any hashable objects from
networkx): ``g.labels[i]`` names vertex ``i``, :meth:`Graph.index_of` maps
labels to vertex numbers and :meth:`Graph.label_of` back. Every public API
that takes a vertex takes a label when the graph has labels.
"""

from __future__ import annotations

import numbers
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
    labels : array_like, shape (n,), optional
        A distinct name for every vertex (see :attr:`labels`).

    The arrays are checked (monotone ``indptr``, indices in range) and copied
    only when a dtype conversion is needed; a ``Graph`` never writes to them.
    It keeps what it derives from them (:meth:`symmetrized`), so they are
    taken as fixed: give a graph new arrays rather than editing them in place.
    (Integer-weight searches also keep a packed adjacency on the graph, 8
    bytes per stored edge, see :func:`graphpar.sssp`; every call compares it with
    the arrays and packs again the blocks of edges that changed, so it never goes
    stale. A delta-stepping search also keeps its work arrays on the graph for
    the next one: about 26 bytes a vertex and 140 KiB a thread.)
    Rows need not be sorted and may hold duplicates only when built directly
    from arrays; the ``from_*`` constructors sort rows and collapse
    duplicates to their smallest weight.

    Attributes
    ----------
    n : int
        Number of vertices.
    nnz : int
        Number of stored edges.
    labels : ndarray of shape (n,), or None
        The vertex labels (unicode strings, int64, float64, or objects), or
        None for an unlabelled graph, whose vertices are their numbers.

    Examples
    --------
    >>> import numpy as np
    >>> g = Graph(np.array([0, 1, 2, 2]), np.array([1, 2]), np.array([0.5, 2.0]))
    >>> g.n, g.nnz, g.indices.dtype
    (3, 2, dtype('int32'))
    >>> g = Graph(g.indptr, g.indices, g.weights, labels=["Rome", "Milan", "Pisa"])
    >>> g.index_of("Pisa"), g.label_of(0)
    (2, 'Rome')
    """

    __slots__ = ("indptr", "indices", "weights", "n", "directed", "_sym", "_labels", "_lookup",
                 "_packed")

    def __init__(self, indptr, indices, weights=None, *, directed: bool = True, labels=None):
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
        self._labels = None
        self._lookup = None
        self._check_structure()
        if not self.directed:
            self._check_symmetric()
        if labels is not None:
            self._labels = label_array(labels, "labels", n=self.n, distinct=True)

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
        lab = "" if self._labels is None else ", labelled"
        return f"<Graph: {self.n} vertices, {self.nnz} stored edges, {kind}{lab}>"

    # ------------------------------------------------------------------ labels
    @property
    def labels(self) -> np.ndarray | None:
        """The vertex labels, ``labels[i]`` naming vertex ``i``; None when unlabelled.

        Read-only; :meth:`with_labels` gives a graph with other labels.

        Examples
        --------
        >>> Graph.from_edges([0], [1], labels=["a", "b"]).labels
        array(['a', 'b'], dtype='<U1')
        """
        return self._labels

    def with_labels(self, labels) -> Graph:
        """Return the same graph (sharing its arrays) with ``labels``, or without any (None).

        Parameters
        ----------
        labels : array_like, shape (n,), or None
            Distinct labels: strings, integers, floats or other hashable objects.

        Examples
        --------
        >>> g = Graph.from_edges([0], [1]).with_labels(["x", "y"])
        >>> g.index_of("y"), g.with_labels(None).labels is None
        (1, True)
        """
        g = object.__new__(Graph)
        g.indptr, g.indices, g.weights = self.indptr, self.indices, self.weights
        g.n, g.directed, g._sym, g._lookup = self.n, self.directed, None, None
        g._labels = None if labels is None else label_array(labels, "labels", n=self.n,
                                                             distinct=True)
        return g

    def index_of(self, label):
        """The vertex number of a label, or of each of an array of labels.

        Parameters
        ----------
        label : label or array_like of labels
            For an unlabelled graph, vertex numbers (checked to lie in ``[0, n)``).

        Returns
        -------
        int or ndarray of int64
            An int for one label, an array (of the input's shape) for an array.

        Raises
        ------
        KeyError
            For a label the graph does not have, naming it (and a close match).
        TypeError
            For a label of the wrong kind (an integer for a graph labelled by strings).

        Examples
        --------
        >>> g = Graph.from_edges([0, 1], [1, 2], labels=["Rome", "Milan", "Pisa"])
        >>> g.index_of("Milan"), g.index_of(["Pisa", "Rome"])
        (1, array([2, 0]))
        >>> g.index_of("Roma")
        Traceback (most recent call last):
        ...
        KeyError: "label 'Roma' is not a vertex of this graph (3 labels); did you mean 'Rome'?"
        """
        return lookup_labels(self, label, "label")

    def label_of(self, index):
        """The label of a vertex number, or the labels of an array of vertex numbers.

        An unlabelled graph's vertices are their own labels: the numbers are
        returned (checked to lie in ``[0, n)``). Use it to key results by label.

        Examples
        --------
        >>> import numpy as np
        >>> g = Graph.from_edges([0, 1], [1, 2], labels=["Rome", "Milan", "Pisa"])
        >>> g.label_of(2), g.label_of(np.array([1, 0]))
        ('Pisa', array(['Milan', 'Rome'], dtype='<U5'))
        >>> dict(zip(g.label_of(np.arange(g.n)).tolist(), [0.0, 1.0, 2.0]))
        {'Rome': 0.0, 'Milan': 1.0, 'Pisa': 2.0}
        """
        if isinstance(index, (bool, np.bool_)):
            raise TypeError(f"index must be a vertex number, got {index!r}")
        if isinstance(index, numbers.Integral):
            i = int(index)
            if not 0 <= i < self.n:
                raise IndexError(f"vertex {i} is out of range for a graph with {self.n} vertices")
            if self._labels is None:
                return i
            label = self._labels[i]
            return label if self._labels.dtype == object else label.item()
        idx = np.asarray(index)
        if idx.size and idx.dtype.kind not in "iu":
            raise TypeError(f"index must hold vertex numbers (integers), got dtype {idx.dtype}")
        bad = (idx < 0) | (idx >= self.n) if idx.size else np.zeros(0, bool)
        if bad.any():
            k = np.unravel_index(int(np.argmax(bad)), idx.shape)
            raise IndexError(f"index{list(k)} = {int(idx[k])} is out of range for a graph with "
                             f"{self.n} vertices")
        idx = idx.astype(np.int64, copy=False)
        return idx if self._labels is None else self._labels[idx]

    # ------------------------------------------------------------------ builders
    @classmethod
    def from_edges(cls, src, dst, weights=None, n: int | None = None, directed: bool = True,
                   *, labels=None):
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
        labels : array_like, shape (n,), optional
            Distinct vertex labels (see :attr:`labels`).

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
        if labels is not None:
            labels = label_array(labels, "labels", n=n, distinct=True)
        return graph_from_edges(src, dst, w, n, directed, labels=labels)

    @classmethod
    def from_networkx(cls, G, weight: str | None = "weight") -> Graph:
        """Build a labelled graph from a networkx graph; its nodes become the labels.

        Parameters
        ----------
        G : networkx.Graph, DiGraph, MultiGraph or MultiDiGraph
            Vertex ``i`` is the ``i``-th node of ``G`` (``list(G)``), labelled by it.
        weight : str or None, default "weight"
            The edge attribute holding the weight; an edge without it weighs 1,
            as in networkx's shortest-path functions. ``None``: every edge weighs 1.
            A weight must be a real number; booleans are refused (as by
            :meth:`from_pandas`), and so are boolean nodes (see :func:`label_array`).

        Returns
        -------
        Graph
            Directed as ``G`` is; parallel edges of a multigraph collapse to
            the smallest weight (what a shortest path uses).

        Examples
        --------
        >>> import networkx as nx
        >>> G = nx.Graph()
        >>> G.add_weighted_edges_from([("Rome", "Pisa", 3.5), ("Pisa", "Lucca", 1.0)])
        >>> g = Graph.from_networkx(G)
        >>> g.labels, g.directed
        (array(['Rome', 'Pisa', 'Lucca'], dtype='<U5'), False)
        >>> import graphpar
        >>> graphpar.sssp(g, "Rome")[g.index_of("Lucca")]
        np.float64(4.5)
        """
        if not (hasattr(G, "is_directed") and hasattr(G, "edges") and hasattr(G, "nodes")):
            raise TypeError(f"expected a networkx graph, got {type_name(G)}")
        nodes = list(G)
        index = {v: i for i, v in enumerate(nodes)}
        m = G.number_of_edges()
        src = np.empty(m, dtype=np.int64)
        dst = np.empty(m, dtype=np.int64)
        w = np.ones(m)
        edges = G.edges(data=weight, default=1.0) if weight is not None else G.edges()
        for k, e in enumerate(edges):
            src[k] = index[e[0]]
            dst[k] = index[e[1]]
            if weight is not None:
                x = e[2]
                if isinstance(x, (bool, np.bool_)) or not isinstance(x, numbers.Real):
                    raise TypeError(
                        f"edge ({e[0]!r}, {e[1]!r}) has {weight}={x!r}; weights must be real "
                        "numbers, and booleans are not weights (pass weight=None to weigh "
                        "every edge 1)"
                    )
                w[k] = float(x)
        labels = label_array(nodes, "the nodes of G")
        return graph_from_edges(src, dst, w, len(nodes), bool(G.is_directed()), labels=labels)

    def to_networkx(self, weight: str | None = "weight"):
        """Return a ``networkx.DiGraph`` (``networkx.Graph`` when undirected) of this graph.

        The nodes are the labels (the vertex numbers for an unlabelled graph),
        in vertex order; each edge carries its weight as the attribute
        ``weight`` (none with ``weight=None``).

        Examples
        --------
        >>> g = Graph.from_edges([0, 1], [1, 2], [2.0, 0.5], labels=["a", "b", "c"])
        >>> G = g.to_networkx()
        >>> list(G.edges(data="weight"))
        [('a', 'b', 2.0), ('b', 'c', 0.5)]
        """
        import networkx as nx

        G = nx.DiGraph() if self.directed else nx.Graph()
        if self._labels is None:
            nodes = np.arange(self.n, dtype=np.int64).astype(object)
        else:
            nodes = np.fromiter(self._labels.tolist() if self._labels.dtype != object
                                else self._labels, dtype=object, count=self.n)
        G.add_nodes_from(nodes.tolist())
        rows, cols, w = self.row_ids(), self.indices, self.weights
        if not self.directed:
            keep = rows <= cols
            rows, cols, w = rows[keep], cols[keep], w[keep]
        us, vs = nodes[rows].tolist(), nodes[cols].tolist()
        if weight is None:
            G.add_edges_from(zip(us, vs, strict=True))
        else:
            G.add_weighted_edges_from(zip(us, vs, w.tolist(), strict=True), weight=weight)
        return G

    @classmethod
    def from_pandas(cls, df, source="source", target="target", weight=None,
                    directed: bool = True) -> Graph:
        """Build a labelled graph from a pandas DataFrame of edges, one row per edge.

        As ``networkx.from_pandas_edgelist``: the values of the ``source`` and
        ``target`` columns are the labels, numbered in order of first
        appearance (row by row, source before target).

        Parameters
        ----------
        df : pandas.DataFrame
        source, target : column names, default "source" and "target"
        weight : column name, optional
            A numeric column of weights; default every edge weighs 1. Booleans
            are refused, as by :meth:`from_networkx`.
        directed : bool, default True
            With ``False`` every edge is stored both ways.

        Returns
        -------
        Graph
            Duplicate edges collapse to their smallest weight.

        Raises
        ------
        KeyError
            For a column ``df`` does not have, listing those it has.
        ValueError
            For a missing id or weight (NaN, None), naming the column and row.
        TypeError
            For a weight column that is not numeric or holds booleans.

        Examples
        --------
        >>> import pandas as pd
        >>> df = pd.DataFrame({"from": ["Rome", "Pisa"], "to": ["Pisa", "Lucca"],
        ...                    "km": [350.0, 20.0]})
        >>> g = Graph.from_pandas(df, source="from", target="to", weight="km")
        >>> g.labels, g.weights
        (array(['Rome', 'Pisa', 'Lucca'], dtype='<U5'), array([350.,  20.]))
        """
        if not (hasattr(df, "columns") and hasattr(df, "index")):
            raise TypeError(f"df must be a pandas DataFrame, got {type_name(df)}")

        def column(name, role):
            if name not in df.columns:
                have = ", ".join(repr(c) for c in list(df.columns)[:20])
                raise KeyError(f"{role}={name!r} is not a column of df (its columns: {have})")
            col = df[name]
            if getattr(col, "ndim", 1) != 1:
                raise ValueError(f"{role}={name!r} names more than one column of df")
            missing = np.asarray(col.isna())
            if missing.any():
                raise ValueError(f"column {name!r} ({role}) has a missing value at row "
                                 f"{df.index[int(np.argmax(missing))]!r}")
            return col

        s = label_array(column(source, "source").to_numpy(), f"column {source!r}")
        t = label_array(column(target, "target").to_numpy(), f"column {target!r}")
        m = s.size
        # one array of both columns, of one kind only: never 1 and "1" as one label
        same = s.dtype.kind == t.dtype.kind and s.dtype.kind in "Uif"
        both = np.empty(2 * m, dtype=np.result_type(s, t) if same else object)
        both[0::2], both[1::2] = s, t
        codes, labels = encode_labels(both)
        if weight is None:
            w = np.ones(m)
        else:
            col = column(weight, "weight")
            if col.dtype.kind == "b":
                raise TypeError(f"weight column {weight!r} holds booleans (dtype {col.dtype}); "
                                "booleans are not weights: convert the column to numbers")
            if col.dtype == object:
                flags = np.fromiter((isinstance(x, (bool, np.bool_)) for x in col), dtype=bool,
                                    count=len(col))
                if flags.any():
                    k = int(np.argmax(flags))
                    raise TypeError(f"weight column {weight!r} holds the boolean {col.iloc[k]!r} "
                                    f"at row {df.index[k]!r}; booleans are not weights")
            try:
                w = col.to_numpy(dtype=np.float64)
            except (TypeError, ValueError):
                raise TypeError(f"weight column {weight!r} must be numeric, got dtype "
                                f"{col.dtype}") from None
        return graph_from_edges(codes[0::2], codes[1::2], w, labels.size, bool(directed),
                                labels=labels)

    @classmethod
    def from_edge_index(cls, edge_index, weight=None, num_nodes: int | None = None,
                        directed: bool = True) -> Graph:
        """Build a graph from a PyTorch Geometric style ``edge_index`` of shape (2, E).

        Parameters
        ----------
        edge_index : array_like or torch.Tensor of int, shape (2, E)
            Row 0 the sources, row 1 the targets, 0-based. A torch tensor is
            converted with ``.detach().cpu().numpy()`` (torch is never imported
            otherwise).
        weight : array_like or torch.Tensor of float, shape (E,) or (E, 1), optional
            The edge weights (PyG's ``edge_weight``); default all ones. NaN and
            booleans are refused, naming the first such weight.
        num_nodes : int, optional
            Number of vertices; default ``edge_index.max() + 1``.
        directed : bool, default True
            PyG stores an undirected graph with both directions listed, which
            ``directed=True`` keeps as it is; ``False`` adds every reverse edge.

        Returns
        -------
        Graph
            Unlabelled (its vertices are PyG's node indices).

        Examples
        --------
        >>> import numpy as np
        >>> ei = np.array([[0, 1, 1, 2], [1, 0, 2, 1]])
        >>> g = Graph.from_edge_index(ei, num_nodes=4)
        >>> g.n, g.nnz
        (4, 4)
        """
        expected = "edge_index must be an integer array of shape (2, E) (numpy or torch)"
        if isinstance(edge_index, (str, bytes)):
            raise TypeError(f"{expected}, got the string {edge_index!r}")
        ei = _as_numpy(edge_index)
        if ei.ndim != 2 or ei.shape[0] != 2:
            hint = " (transpose it: edge_index.T)" if ei.ndim == 2 and ei.shape[1] == 2 else ""
            raise ValueError(
                f"{expected}, row 0 the sources and row 1 the targets; given a "
                f"{type_name(edge_index)}, got shape {ei.shape}{hint}"
            )
        if ei.size and ei.dtype.kind not in "iu":
            raise TypeError(f"edge_index must hold integers, got dtype {ei.dtype}")
        w = None
        if weight is not None:
            w = _as_numpy(weight)
            if w.ndim == 2 and w.shape[1] == 1:
                w = w[:, 0]
            if w.shape != (ei.shape[1],):
                raise ValueError(f"weight must have shape ({ei.shape[1]},) like the edges of "
                                 f"edge_index, got {w.shape}")
            if w.size and w.dtype.kind == "b":
                raise TypeError("weight holds booleans; booleans are not weights: convert "
                                "them to numbers")
            if w.size and w.dtype.kind not in "iuf":
                raise TypeError(f"weight must hold real numbers, got dtype {w.dtype}")
            nan = np.isnan(w) if w.dtype.kind == "f" else np.zeros(w.size, dtype=bool)
            if nan.any():
                k = int(np.argmax(nan))
                raise ValueError(f"weight[{k}] is NaN (edge {k}: {int(ei[0, k])} -> "
                                 f"{int(ei[1, k])}); edge weights must be numbers")
        if num_nodes is not None:
            if isinstance(num_nodes, (bool, np.bool_)) or not isinstance(num_nodes,
                                                                          numbers.Integral):
                raise TypeError(f"num_nodes must be an integer, got {num_nodes!r}")
            if num_nodes < 0:
                raise ValueError(f"num_nodes must be >= 0, got {num_nodes}")
        return cls.from_edges(ei[0], ei[1], w, n=num_nodes, directed=directed)

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

        Every other entry is an edge, however small: scipy's dense conversion
        (``scipy.sparse.csgraph.csgraph_from_dense``) also drops the entries
        within ``1e-8`` of zero, the tolerance of ``np.ma.masked_values``.

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
                self.row_ids(), self.indices, self.weights, self.n, directed=False,
                labels=self._labels,
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


def graph_from_edges(src, dst, weights, n: int, directed: bool, *, labels=None) -> Graph:
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
    labels : ndarray, shape (n,), optional
        Attached as they are: distinct labels from :func:`label_array` or
        :func:`encode_labels`.

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
    counts = np.empty(n, dtype=np.int64)  # entries kept per row: duplicates collapse on the way
    _csr.transpose_rows(indptr_t, cols_t, vals_t, indptr, _row_blocks(indptr, parts), cols, vals,
                        counts)
    del cols_t, vals_t
    new_indptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(counts, out=new_indptr[1:])
    if new_indptr[-1] != nnz:
        c2 = np.empty(new_indptr[-1], dtype=idx)
        v2 = np.empty(new_indptr[-1], dtype=np.float64)
        _csr.compact_rows(indptr, new_indptr, cols, vals, c2, v2)
        cols, vals = c2, v2
    g = Graph(new_indptr, cols, vals)
    g.directed = bool(directed)  # symmetric by construction: skip the check of __init__
    g._labels = labels
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


# ---------------------------------------------------------------------- labels
def type_name(obj) -> str:
    """``module.Class`` of an object's type, its top-level package only: ``networkx.Graph``.

    Examples
    --------
    >>> import numpy as np
    >>> type_name(np.zeros(1)), type_name(3)
    ('numpy.ndarray', 'int')
    """
    t = type(obj)
    top = t.__module__.split(".")[0]
    return t.__qualname__ if top == "builtins" else f"{top}.{t.__qualname__}"


def _as_numpy(x) -> np.ndarray:
    """``x`` as a numpy array; a torch tensor through ``.detach().cpu().numpy()``."""
    if type(x).__module__.startswith("torch"):
        x = x.detach().cpu().numpy()
    elif hasattr(x, "to_numpy") and not isinstance(x, np.ndarray):  # pandas
        x = x.to_numpy()
    return np.asarray(x)


def label_array(values, name: str = "labels", *, n: int | None = None,
                distinct: bool = False) -> np.ndarray:
    """Return labels as a canonical 1-D array: unicode, int64, float64, or object.

    Strings (``str`` or UTF-8 ``bytes``) give a unicode array, integers int64,
    other real numbers float64; anything else (tuples, mixed types) stays an
    object array of hashable values. Nothing is converted across kinds, so
    ``[1, "1"]`` stays two different labels. Missing values (None, NaN) and
    booleans are refused, naming the index.

    Parameters
    ----------
    values : array_like, pandas Series or torch tensor, 1-D
    name : str
        What the values are, for messages.
    n : int, optional
        The number of labels required (one per vertex).
    distinct : bool, default False
        Also refuse a label given twice, naming both vertices.

    Examples
    --------
    >>> label_array(["Rome", "Pisa"]), label_array([3, 10**6])
    (array(['Rome', 'Pisa'], dtype='<U4'), array([      3, 1000000]))
    >>> label_array([(0, 1), (1, 1)])
    array([(0, 1), (1, 1)], dtype=object)
    >>> label_array(["a", "b", "a"], distinct=True)
    Traceback (most recent call last):
    ...
    ValueError: labels must be distinct, but 'a' labels vertices 0 and 2
    """
    if isinstance(values, (str, bytes)):
        raise TypeError(f"{name} must be a 1-D array of labels, got the string {values!r}")
    if isinstance(values, np.ndarray) or type(values).__module__.startswith("torch") \
            or hasattr(values, "to_numpy"):
        arr = _as_numpy(values)
    else:
        seq = list(values)
        arr = np.fromiter(seq, dtype=object, count=len(seq))
    if arr.ndim != 1:
        raise ValueError(f"{name} must be 1-D, got shape {arr.shape}")
    if n is not None and arr.size != n:
        raise ValueError(f"{name} has {arr.size} entries but the graph has {n} vertices")
    arr = _canonical_labels(arr, name)
    if distinct:
        _check_distinct(arr, name)
    return arr


def _canonical_labels(arr: np.ndarray, name: str) -> np.ndarray:
    kind = arr.dtype.kind
    if kind == "U":
        return arr
    if kind == "S":
        try:
            return np.char.decode(arr, "utf-8")
        except UnicodeDecodeError:
            raise ValueError(f"{name} holds bytes that are not UTF-8 text") from None
    if kind == "b":
        raise TypeError(f"{name}: booleans are refused as labels, since True == 1 and "
                        f"False == 0 would make them the labels 1 and 0; got dtype {arr.dtype}")
    if kind in "iu":
        if kind == "u" and arr.size and arr.max() > np.iinfo(np.int64).max:
            return arr.astype(object)
        return arr.astype(np.int64, copy=False)
    if kind == "f":
        nan = np.isnan(arr)
        if nan.any():
            raise ValueError(f"{name} has a missing value (nan) at index {int(np.argmax(nan))}")
        return arr.astype(np.float64, copy=False)
    if kind != "O":
        arr = arr.astype(object)
    strs = ints = reals = True
    for i, x in enumerate(arr):
        if x is None or (isinstance(x, float) and x != x):
            raise ValueError(f"{name} has a missing value ({x!r}) at index {i}")
        if isinstance(x, (bool, np.bool_)):
            raise TypeError(f"{name}: booleans are refused as labels, since True == 1 and "
                            "False == 0 would make them the labels 1 and 0; got the boolean "
                            f"{x!r} at index {i}")
        is_str = isinstance(x, str)
        is_int = isinstance(x, numbers.Integral)
        strs &= is_str
        ints &= is_int
        reals &= isinstance(x, numbers.Real) and not is_int
        if not (is_str or is_int):
            try:
                hash(x)
            except TypeError:
                raise TypeError(f"{name} must be hashable, got {type(x).__name__} at index "
                                f"{i}") from None
    if arr.size and strs:
        return arr.astype(str)
    if arr.size and ints:
        try:
            return arr.astype(np.int64)
        except OverflowError:
            return arr
    if arr.size and reals:
        return arr.astype(np.float64)
    return arr


def _check_distinct(arr: np.ndarray, name: str) -> None:
    if arr.dtype == object:
        seen: dict = {}
        for i, x in enumerate(arr):
            j = seen.setdefault(x, i)
            if j != i:
                raise ValueError(f"{name} must be distinct, but {x!r} labels vertices {j} and {i}")
        return
    order = np.argsort(arr, kind="stable")
    s = arr[order]
    dup = np.flatnonzero(s[1:] == s[:-1])
    if dup.size:
        i, j = int(order[dup[0]]), int(order[dup[0] + 1])
        raise ValueError(f"{name} must be distinct, but {arr[i].item()!r} labels vertices "
                         f"{i} and {j}")


def encode_labels(values, *, order: str = "first") -> tuple[np.ndarray, np.ndarray]:
    """Number the distinct values of an array: ``(codes, labels)`` with ``labels[codes] == values``.

    Parameters
    ----------
    values : array_like, 1-D
        Canonicalised with :func:`label_array`.
    order : {"first", "sorted"}
        Labels numbered in order of first appearance (as networkx numbers
        the nodes of an edge list), or in increasing order.

    Returns
    -------
    codes : ndarray of int64
    labels : ndarray
        The distinct values, canonical (see :func:`label_array`).

    Examples
    --------
    >>> encode_labels(["Pisa", "Rome", "Pisa"])
    (array([0, 1, 0]), array(['Pisa', 'Rome'], dtype='<U4'))
    >>> encode_labels([30, 10, 30], order="sorted")
    (array([1, 0, 1]), array([10, 30]))
    """
    arr = label_array(values, "the vertex ids")
    if arr.dtype == object:
        index: dict = {}
        codes = np.fromiter((index.setdefault(x, len(index)) for x in arr), dtype=np.int64,
                            count=arr.size)
        labels = np.empty(len(index), dtype=object)
        for x, i in index.items():
            labels[i] = x
        if order == "sorted":
            raise TypeError("labels of mixed or object types cannot be sorted")
        return codes, labels
    uniq, first, inv = np.unique(arr, return_index=True, return_inverse=True)
    inv = inv.reshape(-1).astype(np.int64, copy=False)
    if order == "sorted":
        return inv, uniq
    perm = np.argsort(first, kind="stable")
    rank = np.empty(perm.size, dtype=np.int64)
    rank[perm] = np.arange(perm.size, dtype=np.int64)
    return rank[inv], uniq[perm]


_SUGGEST_MAX = 20000  # labels searched for a close match in an error message


def lookup_labels(graph: Graph, query, name: str = "label"):
    """The vertex numbers of labels of ``graph``: an int for one label, an int64 array for many.

    The one label lookup: :meth:`Graph.index_of` and
    :func:`graphpar._validation.check_sources` (every API that takes a
    vertex) use it. A graph without labels takes vertex numbers in
    ``[0, n)``. Labels are matched in their own kind: a graph labelled by
    strings refuses integers rather than reading ``5`` as ``"5"`` or as
    vertex 5.

    Raises
    ------
    KeyError
        A label the graph does not have (with a close match for string labels).
    TypeError
        A label of another kind than the graph's.

    Examples
    --------
    >>> g = Graph.from_edges([0], [1], labels=[10, 20])
    >>> lookup_labels(g, 20), lookup_labels(g, [20, 10])
    (1, array([1, 0]))
    """
    labels = graph.labels
    n = graph.n
    if labels is None:
        return _lookup_numbers(query, n, name)
    if labels.dtype == object:
        return _lookup_objects(graph, query, name)
    if _is_scalar(query):
        q = _typed_query(np.array([query]) if not isinstance(query, np.ndarray) else
                         query.reshape(1), labels, name, scalar=True)
        return int(_search(graph, q, name, scalar_query=query)[0])
    q = _typed_query(query, labels, name, scalar=False)
    return _search(graph, q.reshape(-1), name).reshape(q.shape)


def _is_scalar(query) -> bool:
    return isinstance(query, (str, bytes, numbers.Number, np.generic)) or (
        isinstance(query, np.ndarray) and query.ndim == 0)


def _kind_words(labels: np.ndarray) -> str:
    if labels.dtype.kind == "U":
        ex = f" such as {labels[0].item()!r}" if labels.size else ""
        return f"strings{ex}"
    return "integers" if labels.dtype.kind == "i" else "numbers"


def _typed_query(query, labels: np.ndarray, name: str, *, scalar: bool) -> np.ndarray:
    """The query as an array of the labels' kind, refusing other kinds (no conversion)."""
    want = labels.dtype.kind
    if isinstance(query, np.ndarray) or type(query).__module__.startswith("torch"):
        q = _as_numpy(query)
    else:
        seq = list(query) if not scalar else [query]
        q = np.fromiter(seq, dtype=object, count=len(seq))
    if q.dtype == object:
        ok = {"U": (str,), "i": (numbers.Integral,), "f": (numbers.Real,)}[want]
        for i, x in enumerate(q.ravel()):
            if isinstance(x, (bool, np.bool_)) or not isinstance(x, ok):
                where = name if scalar else f"{name}[{i}]"
                raise TypeError(_wrong_kind(where, x, labels))
        if q.size == 0:
            return np.empty(q.shape, dtype=labels.dtype)
        q = q.astype(labels.dtype if want != "U" else str)
    kind = q.dtype.kind
    if kind == "S" and want == "U":
        q = np.char.decode(q, "utf-8")
        kind = "U"
    compatible = (kind == want or (want == "i" and kind == "u")
                  or (want == "f" and kind in "iu") or q.size == 0)
    if not compatible:
        x = q.ravel()[0].item()
        raise TypeError(_wrong_kind(name if scalar else f"{name}[0]", x, labels))
    return q


def _wrong_kind(where: str, x, labels: np.ndarray) -> str:
    hint = ""
    if labels.dtype.kind == "U" and isinstance(x, numbers.Integral):
        hint = f"; for vertex number {x}, pass g.labels[{x}]"
    return (f"{where} = {x!r} is not a label of this graph: its labels are "
            f"{_kind_words(labels)}{hint}")


def _search(graph: Graph, q: np.ndarray, name: str, scalar_query=None) -> np.ndarray:
    labels = graph.labels
    if graph._lookup is None:
        order = np.argsort(labels, kind="stable")
        graph._lookup = (labels[order], order)
    ordered, order = graph._lookup
    if ordered.size == 0:
        pos = np.zeros(q.size, dtype=np.int64)
        found = np.zeros(q.size, dtype=bool)
    else:
        pos = np.minimum(np.searchsorted(ordered, q), ordered.size - 1)
        found = ordered[pos] == q
    if not found.all():
        k = int(np.argmin(found))
        x = q[k].item()
        where = f"{name} {x!r}" if scalar_query is not None else f"{name}[{k}] = {x!r}"
        raise KeyError(f"{where} is not a vertex of this graph ({labels.size} labels)"
                       f"{_suggestion(x, labels)}")
    return order[pos].astype(np.int64, copy=False)


def _suggestion(x, labels: np.ndarray) -> str:
    if labels.dtype.kind != "U" or not isinstance(x, str) or labels.size > _SUGGEST_MAX:
        return ""
    import difflib

    close = difflib.get_close_matches(x, labels.tolist(), n=1)
    return f"; did you mean {close[0]!r}?" if close else ""


def _lookup_objects(graph: Graph, query, name: str):
    if graph._lookup is None:
        graph._lookup = {x: i for i, x in enumerate(graph.labels)}
    index = graph._lookup
    try:
        if query in index:
            return index[query]
    except TypeError:
        pass
    if _is_scalar(query) or not hasattr(query, "__iter__"):
        raise KeyError(f"{name} {query!r} is not a vertex of this graph "
                       f"({graph.n} labels)")
    out = []
    for k, x in enumerate(query):
        try:
            out.append(index[x])
        except (KeyError, TypeError):
            raise KeyError(f"{name}[{k}] = {x!r} is not a vertex of this graph "
                           f"({graph.n} labels)") from None
    return np.array(out, dtype=np.int64)


def _lookup_numbers(query, n: int, name: str):
    """Vertex numbers of an unlabelled graph, checked to lie in ``[0, n)``."""
    if isinstance(query, (bool, np.bool_)) or isinstance(query, (str, bytes)):
        raise TypeError(f"{name} = {query!r}: this graph has no labels; its vertices are the "
                        f"numbers 0 to {n - 1}")
    if isinstance(query, numbers.Integral):
        i = int(query)
        if not 0 <= i < n:
            raise KeyError(f"{name} {i} is not a vertex of this graph (vertices 0 to {n - 1})")
        return i
    q = _as_numpy(query)
    if q.size and q.dtype.kind not in "iu":
        raise TypeError(f"{name}: this graph has no labels; its vertices are the numbers 0 to "
                        f"{n - 1}, got dtype {q.dtype}")
    bad = (q < 0) | (q >= n) if q.size else np.zeros(q.shape, dtype=bool)
    if bad.any():
        k = int(np.argmax(bad.ravel()))
        raise KeyError(f"{name}[{k}] = {int(q.ravel()[k])} is not a vertex of this graph "
                       f"(vertices 0 to {n - 1})")
    return q.astype(np.int64, copy=False)
