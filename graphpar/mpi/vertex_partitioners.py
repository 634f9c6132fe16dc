"""Vertex partitioners for the distributed GCN: assignments ``part[v] in [0, nparts)``.

Pure functions, no MPI. Every partitioner returns an assignment; the
relabelling :func:`contiguous_relabel` then renumbers the vertices so that
each part is a contiguous range, which is what a
:class:`~graphpar.mpi.blocks.BlockPartition` of rows describes. Within a part,
vertices keep their relative order, except that (when the operator is given)
*interior* vertices, whose rows reference no other part, come first: the
distributed product computes those rows while the halo rows are still in
flight.

Methods:

``block``
    Contiguous ranges of about ``n / nparts`` vertices.
``edge``
    Contiguous ranges of about equal ``nnz + rows``, the cost of the product
    (:meth:`BlockPartition.edge_balanced`).
``random``
    A random balanced assignment (a baseline: nearly every edge is cut).
``metis``
    Graph partitioning of the symmetrised pattern by METIS (``pymetis``),
    minimising the edge cut.
``hypergraph``
    Hypergraph partitioning with the column-net model (Catalyurek and
    Aykanat): one net per column ``j`` whose pins are vertex ``j`` and every
    row that references ``j``. A net spanning ``lambda`` parts costs
    ``lambda - 1`` halo rows, so minimising the connectivity-minus-one
    metric with Mt-KaHyPar (``mtkahypar``) minimises the true communication
    volume of the halo exchange.

``metis`` and ``hypergraph`` need the optional extra ``graphpar[partition]``.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from graphpar.mpi.blocks import BlockPartition
from graphpar.mpi.partition_methods import EXTRA, METHODS

_MTKAHYPAR = None  # the process-wide Mt-KaHyPar initializer (it may be created once)


def _structure(op) -> tuple[np.ndarray, np.ndarray, int]:
    """Return ``(indptr int64, indices int64, n)`` of a square sparse operator or Graph."""
    if hasattr(op, "indptr") and hasattr(op, "indices") and hasattr(op, "n"):
        return (np.asarray(op.indptr, dtype=np.int64), np.asarray(op.indices, dtype=np.int64),
                int(op.n))
    if not sp.issparse(op):
        raise TypeError(f"op must be a scipy sparse matrix or array or a Graph, got {type(op)!r}")
    if op.ndim != 2 or op.shape[0] != op.shape[1]:
        raise ValueError(f"op must be square, got shape {op.shape}")
    csr = op.tocsr()
    return (np.asarray(csr.indptr, dtype=np.int64), np.asarray(csr.indices, dtype=np.int64),
            int(op.shape[0]))


def _check_nparts(nparts) -> int:
    if isinstance(nparts, bool) or int(nparts) != nparts:
        raise TypeError(f"nparts must be an integer, got {nparts!r}")
    if nparts < 1:
        raise ValueError(f"nparts must be at least 1, got {nparts}")
    return int(nparts)


def _require(module: str, method: str):
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise ImportError(
            f"partition method {method!r} needs the optional package {module!r}, which is not "
            f"installed: pip install '{EXTRA}'"
        ) from exc


def _from_offsets(offsets: np.ndarray) -> np.ndarray:
    return np.repeat(np.arange(offsets.size - 1, dtype=np.int64), np.diff(offsets))


def _random(n: int, nparts: int, seed: int) -> np.ndarray:
    part = _from_offsets(BlockPartition.block(n, nparts).offsets)
    return np.random.default_rng(seed).permutation(part)


def _symmetric_pattern(indptr, indices, n) -> sp.csr_array:
    a = sp.csr_array((np.ones(indices.size, dtype=np.int8), indices, indptr), shape=(n, n))
    s = (a + a.T).tocsr()
    s.setdiag(0)
    s.eliminate_zeros()
    s.sort_indices()
    return s


def _metis(indptr, indices, n, nparts, seed) -> np.ndarray:
    pymetis = _require("pymetis", "metis")
    if nparts == 1 or n == 0:
        return np.zeros(n, dtype=np.int64)
    s = _symmetric_pattern(indptr, indices, n)
    opts = pymetis.Options(seed=int(seed))
    xadj, adjncy = s.indptr.astype(np.int64), s.indices.astype(np.int64)
    if hasattr(pymetis, "CSRAdjacency"):  # pymetis >= 2025.2; xadj= is deprecated there
        _, parts = pymetis.part_graph(nparts, pymetis.CSRAdjacency(xadj, adjncy), options=opts)
    else:
        _, parts = pymetis.part_graph(nparts, xadj=xadj, adjncy=adjncy, options=opts)
    return np.asarray(parts, dtype=np.int64)


def _hypergraph(indptr, indices, n, nparts, seed, epsilon) -> np.ndarray:
    global _MTKAHYPAR
    mtk = _require("mtkahypar", "hypergraph")
    if nparts == 1 or n == 0:
        return np.zeros(n, dtype=np.int64)
    # Column-net model: net j = {j} + {rows referencing column j}; size-1 nets cost nothing.
    a = sp.csr_array((np.ones(indices.size, dtype=np.int8), indices, indptr), shape=(n, n))
    a = (a + sp.eye_array(n, dtype=np.int8, format="csr")).tocsc()
    a.sum_duplicates()
    sizes = np.diff(a.indptr)
    nets = [a.indices[a.indptr[j]:a.indptr[j + 1]].tolist() for j in np.flatnonzero(sizes > 1)]
    if not nets:  # nothing to cut: any balanced assignment is optimal
        return _from_offsets(BlockPartition.block(n, nparts).offsets)
    if _MTKAHYPAR is None:
        _MTKAHYPAR = mtk.initialize(1, False)
    mtk.set_seed(int(seed))
    ctx = _MTKAHYPAR.context_from_preset(mtk.PresetType.DETERMINISTIC)
    ctx.set_partitioning_parameters(nparts, float(epsilon), mtk.Objective.KM1)
    ctx.logging = False
    hg = _MTKAHYPAR.create_hypergraph(ctx, n, len(nets), nets)
    return np.asarray(hg.partition(ctx).get_partition(), dtype=np.int64)


def assign(op, nparts: int, method: str = "block", *, seed: int = 0,
           epsilon: float = 0.03, progress: bool | None = False) -> np.ndarray:
    """Assign each vertex (row) of a square sparse operator to one of ``nparts`` parts.

    Parameters
    ----------
    op : scipy sparse matrix or array, or Graph
        The operator whose rows are distributed (only its pattern is used).
    nparts : int
        Number of parts (MPI ranks); parts may come out empty when ``nparts > n``.
    method : {"block", "edge", "random", "metis", "hypergraph"}
        See the module documentation.
    seed : int, default 0
        Seed of the ``random``, ``metis`` and ``hypergraph`` methods; the same
        seed gives the same assignment.
    epsilon : float, default 0.03
        Allowed imbalance of the ``hypergraph`` partition (part sizes up to
        ``(1 + epsilon) * n / nparts``).
    progress : bool or None, default False
        Report the partitioning on stderr (:func:`graphpar.progress.progress`):
        reading the operator's pattern, then the partitioner's run, which
        METIS and Mt-KaHyPar do not report on, so the line says when it
        ended. Pure function: under MPI pass ``progress=comm.rank == 0``.

    Returns
    -------
    numpy.ndarray of int64, shape (n,)
        ``part[v]`` for every vertex.

    Raises
    ------
    ImportError
        ``metis`` or ``hypergraph`` without the extra ``graphpar[partition]``.

    Examples
    --------
    >>> import scipy.sparse as sp
    >>> a = sp.random_array((6, 6), density=0.3, random_state=0, format="csr")
    >>> assign(a, 2, "block").tolist()
    [0, 0, 0, 1, 1, 1]
    """
    nparts = _check_nparts(nparts)
    if method not in METHODS:
        raise ValueError(f"method must be one of {', '.join(METHODS)}; got {method!r}")
    if not 0 <= float(epsilon) < 1:
        raise ValueError(f"epsilon must be in [0, 1), got {epsilon!r}")
    from graphpar.progress import progress as report

    with report(2, f"partitioning ({method})", unit="step", enabled=progress) as bar:
        indptr, indices, n = _structure(op)
        bar.update()
        if method == "block":
            part = _from_offsets(BlockPartition.block(n, nparts).offsets)
        elif method == "edge":
            part = _from_offsets(BlockPartition.edge_balanced(indptr, nparts).offsets)
        elif method == "random":
            part = _random(n, nparts, seed)
        elif method == "metis":
            part = _metis(indptr, indices, n, nparts, seed)
        else:
            part = _hypergraph(indptr, indices, n, nparts, seed, epsilon)
        bar.update()
    return part


@dataclass(frozen=True)
class Relabelling:
    """A renumbering of vertices that makes every part a contiguous range.

    Attributes
    ----------
    perm : numpy.ndarray of int64
        ``perm[new] = old``: new vertex ``new`` is old vertex ``perm[new]``.
    inverse : numpy.ndarray of int64
        ``inverse[old] = new``.
    offsets : numpy.ndarray of int64, shape (nparts + 1,)
        Part ``r`` holds new vertices ``offsets[r]:offsets[r+1]``.
    n_interior : numpy.ndarray of int64, shape (nparts,)
        How many vertices at the start of each part are interior (their rows
        reference no other part); 0 when no operator was given.
    """

    perm: np.ndarray
    inverse: np.ndarray
    offsets: np.ndarray
    n_interior: np.ndarray

    @property
    def nparts(self) -> int:
        return int(self.offsets.size - 1)

    @property
    def partition(self) -> BlockPartition:
        """The contiguous partition of the new numbering."""
        return BlockPartition(self.offsets)

    def permute_operator(self, op) -> sp.csr_array:
        """Return ``P op P.T`` as a CSR array in the new numbering (rows and columns).

        Examples
        --------
        >>> import numpy as np, scipy.sparse as sp
        >>> r = contiguous_relabel(np.array([1, 0, 1]), 2)
        >>> float(r.permute_operator(sp.eye_array(3, format="csr")).toarray().trace())
        3.0
        """
        csr = sp.csr_array(op)
        out = csr[self.perm][:, self.perm]
        out = sp.csr_array(out)
        out.sort_indices()
        return out

    def to_new(self, x: np.ndarray) -> np.ndarray:
        """Rows of ``x`` (indexed by old vertex) in the new order.

        Examples
        --------
        >>> import numpy as np
        >>> contiguous_relabel(np.array([1, 0]), 2).to_new(np.array([10, 20])).tolist()
        [20, 10]
        """
        return np.asarray(x)[self.perm]

    def to_old(self, x: np.ndarray) -> np.ndarray:
        """Rows of ``x`` (indexed by new vertex) back in the original order.

        Examples
        --------
        >>> import numpy as np
        >>> contiguous_relabel(np.array([1, 0]), 2).to_old(np.array([20, 10])).tolist()
        [10, 20]
        """
        return np.asarray(x)[self.inverse]


def contiguous_relabel(assignment, nparts: int, op=None) -> Relabelling:
    """Renumber vertices so that each part of ``assignment`` is a contiguous range.

    Parameters
    ----------
    assignment : array_like of int, shape (n,)
        ``assignment[v]`` in ``[0, nparts)``.
    nparts : int
        Number of parts (parts may be empty).
    op : scipy sparse matrix or array, optional
        When given, each part lists its interior vertices (rows with no
        column in another part) before its boundary vertices; otherwise
        vertices keep their order within a part.

    Returns
    -------
    Relabelling

    Examples
    --------
    >>> import numpy as np
    >>> r = contiguous_relabel(np.array([1, 0, 1, 0]), 2)
    >>> r.perm.tolist(), r.offsets.tolist()
    ([1, 3, 0, 2], [0, 2, 4])
    """
    nparts = _check_nparts(nparts)
    part = np.asarray(assignment)
    if part.ndim != 1:
        raise ValueError(f"assignment must be one-dimensional, got shape {part.shape}")
    if part.size and not np.issubdtype(part.dtype, np.integer):
        raise TypeError(f"assignment must hold integers, got dtype {part.dtype}")
    part = part.astype(np.int64, copy=False)
    bad = np.flatnonzero((part < 0) | (part >= nparts))
    if bad.size:
        raise ValueError(
            f"assignment[{bad[0]}] = {part[bad[0]]} is outside [0, nparts={nparts})"
        )
    n = part.size
    boundary = np.zeros(n, dtype=np.int64)
    if op is not None:
        indptr, indices, n_op = _structure(op)
        if n_op != n:
            raise ValueError(f"op has {n_op} rows but assignment has {n} entries")
        rows = np.repeat(np.arange(n, dtype=np.int64), np.diff(indptr))
        cut = part[rows] != part[indices]
        boundary[np.unique(rows[cut])] = 1
    perm = np.lexsort((np.arange(n), boundary, part)).astype(np.int64)
    inverse = np.empty(n, dtype=np.int64)
    inverse[perm] = np.arange(n, dtype=np.int64)
    counts = np.bincount(part, minlength=nparts).astype(np.int64)
    offsets = np.concatenate(([0], np.cumsum(counts))).astype(np.int64)
    interior = np.bincount(part[boundary == 0], minlength=nparts).astype(np.int64)
    if op is None:
        interior = np.zeros(nparts, dtype=np.int64)
    return Relabelling(perm, inverse, offsets, interior)
