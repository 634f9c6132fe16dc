"""A graph distributed by contiguous vertex ranges: each rank owns its rows (out-edges).

Naming: ``gn``/``gnnz`` are global counts (vertices, stored edges), ``ln``/``lnnz``
this rank's. ``indptr`` (int64, ``ln + 1``) indexes this rank's rows, whose
``indices`` are *global* target ids and ``weights`` float64, with the same
conventions as :class:`graphpar.Graph`: rows sorted by target, duplicate edges
collapsed to their smallest weight, an undirected graph storing every edge both
ways. Gathered to one rank it is byte for byte the :class:`graphpar.Graph` that
the serial readers and generators build.

Labels: a labelled graph (a CSV edge list with string ids, ``relabel=True``, a
labelled :class:`graphpar.Graph` distributed) keeps the whole label array on
rank 0 alone (``dg.labels``; ``n`` labels, for a unicode array ``4 n`` bytes
per character of the longest label), for output and for looking labels up
(:meth:`DistGraph.index_of`); ``dg.labelled`` says on every rank whether there
are labels.
"""

from __future__ import annotations

import numpy as np

from graphpar._graph import Graph, index_dtype, lookup_labels
from graphpar.kernels import csr as _csr
from graphpar.kernels import dist_sssp as _k
from graphpar.mpi.blocks import BlockPartition
from graphpar.mpi.comm import get_comm
from graphpar.mpi.exchange import alltoallv, exchange_counts, exclusive_cumsum

__all__ = ["DistGraph", "distribute_graph"]


class DistGraph:
    """This rank's share of a graph distributed by contiguous vertex ranges.

    Build one with :func:`distribute_graph`, :meth:`from_local_edges`,
    :func:`graphpar.mpi.read_graph` or :func:`graphpar.mpi.generate`;
    every rank of ``comm`` holds one.

    Attributes
    ----------
    partition : BlockPartition
        Which rank owns which vertices (one part per rank).
    rank, nranks : int
        This rank and the number of ranks.
    lo, hi : int
        This rank owns the global vertices ``lo <= v < hi``.
    gn, ln : int
        Global and local numbers of vertices.
    gnnz, lnnz : int
        Global and local numbers of stored edges.
    indptr, indices, weights : ndarray
        This rank's rows in CSR form (``indices`` are global ids).
    directed : bool
    labels : ndarray or None
        On rank 0 the whole graph's vertex labels (``labels[v]`` names global
        vertex ``v``), as :attr:`graphpar.Graph.labels`; None on the other
        ranks and for a graph without labels.
    labelled : bool
        Whether the graph has labels (the same on every rank).
    comm : mpi4py.MPI.Comm

    Examples
    --------
    >>> import graphpar as gp                                   # doctest: +SKIP
    >>> g = gp.Graph.from_edges([0, 1], [1, 2])                 # doctest: +SKIP
    >>> dg = distribute_graph(g)   # run under mpiexec -n K       # doctest: +SKIP
    >>> dg.gn, dg.gnnz                                          # doctest: +SKIP
    (3, 2)
    """

    def __init__(self, partition, indptr, indices, weights, *, directed=True, gnnz=None,
                 labels=None, labelled: bool = False, comm=None):
        comm = get_comm(comm)
        if partition.nparts != comm.Get_size():
            raise ValueError(
                f"partition has {partition.nparts} parts but the communicator has "
                f"{comm.Get_size()} ranks"
            )
        self.comm = comm
        self.partition = partition
        self.rank = comm.Get_rank()
        self.nranks = comm.Get_size()
        self.lo, self.hi = partition.range(self.rank)
        self.gn = partition.n
        self.ln = self.hi - self.lo
        self.indptr = np.asarray(indptr, dtype=np.int64)
        self.indices = np.asarray(indices).astype(index_dtype(self.gn), copy=False)
        self.weights = np.asarray(weights, dtype=np.float64)
        if self.indptr.shape != (self.ln + 1,) or self.indptr[-1] != self.indices.size:
            raise ValueError("local indptr does not match this rank's vertex range and edges")
        self.directed = bool(directed)
        self.lnnz = int(self.indices.size)
        self.gnnz = int(comm.allreduce(self.lnnz)) if gnnz is None else int(gnnz)
        self._sym = None
        self._ghosts = None
        self.workspace = {}  # scratch arrays that algorithms reuse between calls
        self.labelled = bool(labelled)
        self.labels = labels if self.labelled and self.rank == 0 else None
        self._label_index = None
        if self.labels is not None and len(self.labels) != self.gn:
            raise ValueError(f"labels has {len(self.labels)} entries, the graph {self.gn} "
                             "vertices")

    def __repr__(self) -> str:
        kind = "directed" if self.directed else "undirected"
        lab = ", labelled" if self.labelled else ""
        return (
            f"<DistGraph rank {self.rank}/{self.nranks}: vertices [{self.lo}, {self.hi}) of "
            f"{self.gn}, {self.lnnz} of {self.gnnz} stored edges, {kind}{lab}>"
        )

    # ------------------------------------------------------------ labels
    def without_labels(self) -> DistGraph:
        """Return the same graph (sharing its arrays and caches) without labels. Local.

        Vertices are then given by number, as :meth:`graphpar.Graph.with_labels`
        ``(None)`` does serially.

        Examples
        --------
        >>> plain = dg.without_labels()   # doctest: +SKIP
        """
        import copy

        out = copy.copy(self)
        out.labels, out.labelled, out._label_index = None, False, None
        return out

    def index_of(self, label, name: str = "label"):
        """The global vertex number of a label, or of each of an array of labels. Collective.

        Rank 0 looks the labels up (:meth:`graphpar.Graph.index_of`'s rules and
        messages) and every rank gets the answer: an ``int`` for one label, an
        int64 array for several. A graph without labels takes vertex numbers
        in ``[0, gn)``. An unknown label raises ``KeyError``, a label of
        another kind ``TypeError``, on every rank.

        Examples
        --------
        >>> dg.index_of("Rome"), dg.index_of(["Pisa", "Rome"])   # doctest: +SKIP
        (0, array([2, 0]))
        """
        from graphpar.mpi.comm import run_collectively

        def look():
            if self.rank != 0:
                return None
            return lookup_labels(self._labels_for_lookup(), label, name)

        return self.comm.bcast(run_collectively(look, self.comm), root=0)

    def _labels_for_lookup(self):
        """What :func:`graphpar._graph.lookup_labels` needs of a graph (rank 0)."""
        if self._label_index is None:
            self._label_index = _LabelIndex(self.labels, self.gn)
        return self._label_index

    # ------------------------------------------------------------ builders
    @classmethod
    def from_local_edges(cls, src, dst, weights, gn: int, *, directed: bool = True,
                         partition: BlockPartition | None = None, labels=None,
                         labelled: bool = False, comm=None) -> DistGraph:
        """Build a distributed graph from edges held anywhere: each rank passes some edges.

        The edges (global 0-based ids) are shuffled to the ranks that own their
        sources with one ``Alltoallv``; each rank then sorts its rows and keeps
        the smallest weight of duplicate edges. With ``directed=False`` each
        edge also travels reversed to the owner of its target. Collective.

        Parameters
        ----------
        src, dst : ndarray of int
            This rank's edges; ids must be in ``[0, gn)`` (not checked here).
        weights : ndarray of float or None
            Edge weights (default all ones).
        gn : int
            Global number of vertices.
        directed : bool, default True
        partition : BlockPartition, optional
            Default: ``BlockPartition.block(gn, size)``.
        labels : ndarray, optional
            On rank 0, the ``gn`` vertex labels (ignored elsewhere).
        labelled : bool, default False
            Whether there are labels: the same on every rank.
        comm : mpi4py.MPI.Comm, optional

        Examples
        --------
        >>> dg = DistGraph.from_local_edges(np.array([0]), np.array([1]), None, 2)  # doctest: +SKIP
        """
        comm = get_comm(comm)
        if partition is None:
            partition = BlockPartition.block(gn, comm.Get_size())
        idx = index_dtype(gn)
        src = np.asarray(src).astype(idx, copy=False)
        dst = np.asarray(dst).astype(idx, copy=False)
        w = np.ones(src.size) if weights is None else np.asarray(weights, dtype=np.float64)
        if not directed:
            src, dst = np.concatenate([src, dst]), np.concatenate([dst, src])
            w = np.concatenate([w, w])
        src, dst, w = shuffle_edges(src, dst, w, partition, comm)
        lo, hi = partition.range(comm.Get_rank())
        indptr, cols, vals = local_csr(src, dst, w, lo, hi)
        return cls(partition, indptr, cols, vals, directed=directed, labels=labels,
                   labelled=labelled, comm=comm)

    # ------------------------------------------------------------ views
    def gather(self, root: int = 0) -> Graph | None:
        """Gather the whole graph on ``root`` as a :class:`graphpar.Graph`; None elsewhere.

        Collective. Only for graphs that fit on one rank (tests, small outputs).

        Examples
        --------
        >>> g = dg.gather()   # doctest: +SKIP
        """
        comm = self.comm
        deg = np.diff(self.indptr)
        degs = gatherv(deg, root, comm)
        idx = gatherv(self.indices, root, comm)
        w = gatherv(self.weights, root, comm)
        if comm.Get_rank() != root:
            return None
        indptr = np.zeros(self.gn + 1, dtype=np.int64)
        np.cumsum(degs, out=indptr[1:])
        return Graph(indptr, idx, w, directed=self.directed, labels=self.labels)

    def edge_balanced_partition(self, vertex_cost: float = 1.0) -> BlockPartition:
        """Return ``BlockPartition.edge_balanced`` of the global graph, without gathering it.

        Each rank knows the running work (``deg + vertex_cost``) at its own
        vertex boundaries (one ``Exscan``); the rank whose range holds a cut's
        target places that cut, by the serial rule; one ``Allreduce`` collects
        the cuts. Collective.

        Examples
        --------
        >>> part = dg.edge_balanced_partition()   # doctest: +SKIP
        """
        from mpi4py import MPI

        comm = self.comm
        nparts = comm.Get_size()
        vertex_cost = float(vertex_cost)
        work = np.diff(self.indptr).astype(np.float64) + vertex_cost
        local_total = float(work.sum())
        before = comm.exscan(local_total)
        before = 0.0 if self.rank == 0 or before is None else before
        total = comm.allreduce(local_total)
        cum = np.empty(self.ln + 1)
        cum[0] = before
        np.cumsum(work, out=cum[1:])
        cum[1:] += before
        cuts = np.full(nparts + 1, -1, dtype=np.int64)
        targets = total * np.arange(1, nparts, dtype=np.float64) / nparts
        for k, t in enumerate(targets, start=1):
            if self.ln and cum[0] < t <= cum[-1]:
                i = int(np.searchsorted(cum, t, side="left"))  # global vertex lo + i
                if t - cum[i - 1] <= cum[i] - t:
                    i -= 1
                cuts[k] = self.lo + i
            elif self.rank == 0 and t <= 0:
                cuts[k] = 0
        comm.Allreduce(MPI.IN_PLACE, cuts, op=MPI.MAX)
        cuts[0] = 0
        cuts[-1] = self.gn
        cuts[cuts < 0] = 0
        np.maximum.accumulate(cuts, out=cuts)
        np.minimum(cuts, self.gn, out=cuts)
        return BlockPartition(cuts)

    def redistribute(self, partition: BlockPartition, *,
                     progress: bool | None = False) -> DistGraph:
        """Return the same graph laid out by ``partition`` (rows move with one ``Alltoallv``).

        Collective. ``dg.redistribute(dg.edge_balanced_partition())`` balances
        the edges of a graph read or generated in equal vertex blocks.
        ``progress`` reports its two steps (moving the edges, building the rows)
        from rank 0 alone (:func:`graphpar.progress.progress`).

        Examples
        --------
        >>> balanced = dg.redistribute(dg.edge_balanced_partition())   # doctest: +SKIP
        """
        if partition.n != self.gn or partition.nparts != self.nranks:
            raise ValueError(
                f"partition is for {partition.n} vertices in {partition.nparts} parts; the "
                f"graph has {self.gn} vertices on {self.nranks} ranks"
            )
        from graphpar.progress import progress as report

        with report(2, "redistributing the graph", unit="step",
                    enabled=progress if self.rank == 0 else False) as bar:
            rows = np.repeat(np.arange(self.lo, self.hi, dtype=self.indices.dtype),
                             np.diff(self.indptr))
            src, dst, w = shuffle_edges(rows, self.indices, self.weights, partition,
                                        self.comm)
            bar.update()
            lo, hi = partition.range(self.rank)
            indptr, cols, vals = local_csr(src, dst, w, lo, hi)
            bar.update()
        return DistGraph(partition, indptr, cols, vals, directed=self.directed,
                         gnnz=self.gnnz, labels=self.labels, labelled=self.labelled,
                         comm=self.comm)

    def symmetrized(self) -> DistGraph:
        """Return the undirected closure (every edge both ways, smallest weight per pair).

        Collective; the result is cached; an undirected graph returns itself.

        Examples
        --------
        >>> und = dg.symmetrized()   # doctest: +SKIP
        """
        if not self.directed:
            return self
        if self._sym is None:
            rows = np.repeat(np.arange(self.lo, self.hi, dtype=self.indices.dtype),
                             np.diff(self.indptr))
            self._sym = DistGraph.from_local_edges(
                rows, self.indices, self.weights, self.gn, directed=False,
                partition=self.partition, labels=self.labels, labelled=self.labelled,
                comm=self.comm,
            )
        return self._sym

    def gather_vertex_values(self, values, root: int = 0) -> np.ndarray | None:
        """Gather per-vertex values, this rank's on every rank, on ``root``; None elsewhere.

        ``values`` has shape ``(ln,)`` or ``(k, ln)`` (the same ``k`` and dtype
        on every rank), as :func:`graphpar.mpi.sssp` returns distances and
        predecessors; the result has shape ``(gn,)`` or ``(k, gn)``, as
        :func:`graphpar.sssp` returns them. Collective, in one ``Gatherv``;
        only for arrays that fit on one rank.

        Examples
        --------
        >>> dist = sssp(dg, [0, 5])                  # shape (2, dg.ln)  # doctest: +SKIP
        >>> full = dg.gather_vertex_values(dist)     # shape (2, dg.gn) on rank 0  # doctest: +SKIP
        """
        from graphpar.mpi.comm import run_collectively

        v = run_collectively(lambda: self._check_vertex_values(values), self.comm)
        k = int(np.prod(v.shape[:-1]))
        cols = np.ascontiguousarray(v.reshape(k, self.ln).T)  # rank-major after the gather
        out = gatherv(cols.ravel(), root, self.comm)
        if self.comm.Get_rank() != root:
            return None
        full = out.reshape(self.gn, k).T
        return np.ascontiguousarray(full[0] if v.ndim == 1 else full)

    def write_vertex_values(self, path, values) -> None:
        """Write per-vertex values to one ``.npy`` file, each rank writing its own columns.

        ``values`` as for :meth:`gather_vertex_values`. Rank 0 creates a
        temporary file beside ``path`` (:func:`graphpar.io.atomic_write`;
        shape ``(gn,)`` or ``(k, gn)``, the dtype of ``values``); every rank
        writes its vertex range into it, so no rank holds the whole array; once
        every rank is done, rank 0 renames it to ``path``. An error on any rank
        (a bad path, a full disk), Ctrl-C or SIGTERM in the CLI, removes the
        temporary file and leaves ``path`` as it was. The file system must be
        shared by the ranks. Collective; an error is raised on every rank.

        Examples
        --------
        >>> dg.write_vertex_values("dist.npy", sssp(dg, 0))   # doctest: +SKIP
        """
        import contextlib
        import os

        from graphpar.io import atomic_write
        from graphpar.mpi.comm import run_collectively

        comm = self.comm
        path = os.fspath(path)
        root = comm.Get_rank() == 0
        v = run_collectively(lambda: self._check_vertex_values(values), comm)

        with contextlib.ExitStack() as output:  # rank 0's atomic_write: cleans up on errors
            def create():
                if root:
                    tmp = output.enter_context(atomic_write(path, "wb")).name
                    np.lib.format.open_memmap(tmp, mode="w+", dtype=v.dtype,
                                              shape=v.shape[:-1] + (self.gn,))
                    return tmp
                return None

            tmp = comm.bcast(run_collectively(create, comm), root=0)

            def write():
                if self.ln:
                    mm = np.lib.format.open_memmap(tmp, mode="r+")
                    mm[..., self.lo:self.hi] = v
                    mm.flush()
                    del mm

            # collective, so it is also the barrier: every rank's part is in before the rename
            run_collectively(write, comm)
            run_collectively(lambda: output.close() if root else None, comm)

    def _check_vertex_values(self, values) -> np.ndarray:
        v = np.asarray(values)
        if v.ndim not in (1, 2) or v.shape[-1] != self.ln:
            raise ValueError(
                f"values must have shape ({self.ln},) or (k, {self.ln}) on rank {self.rank} "
                f"(its vertices [{self.lo}, {self.hi})), got {v.shape}"
            )
        return v

    def ghosts(self):
        """Return ``(lidx, lweights, ghost_global, ghost_owner)``: rows for the SSSP kernels.

        Owned targets ``t`` become ``t - lo``; the other targets (ghosts), sorted
        by global id, become ``ln, ln + 1, ...``. Each row is ordered by weight
        (``lidx`` and ``lweights`` go with ``indptr``), so that its light edges
        are a prefix. Cached. Local, not collective.

        Examples
        --------
        >>> lidx, lweights, ghost_global, ghost_owner = dg.ghosts()   # doctest: +SKIP
        """
        if self._ghosts is None:
            ind = self.indices
            remote = ind[(ind < self.lo) | (ind >= self.hi)]
            ghost_global = np.unique(remote).astype(np.int64)
            ghost_owner = (np.searchsorted(self.partition.offsets, ghost_global, side="right")
                           - 1).astype(np.int64)
            lidx = np.empty(self.lnnz, dtype=index_dtype(self.ln + ghost_global.size))
            _k.to_local_ids(ind, self.lo, self.hi, ghost_global, lidx)
            sidx = np.empty_like(lidx)
            sw = np.empty(self.lnnz, dtype=np.float64)
            _k.sort_rows_by_weight(self.indptr, lidx, self.weights, sidx, sw)
            self._ghosts = (sidx, sw, ghost_global, ghost_owner)
        return self._ghosts


class _LabelIndex:
    """Rank 0's labels in the shape :func:`graphpar._graph.lookup_labels` reads."""

    __slots__ = ("labels", "n", "_lookup")

    def __init__(self, labels, n: int):
        self.labels, self.n, self._lookup = labels, n, None


def gatherv(arr: np.ndarray, root: int, comm) -> np.ndarray | None:
    """Gather 1-D arrays of any lengths on ``root`` (concatenated by rank); None elsewhere.

    Examples
    --------
    >>> gatherv(np.arange(3), 0, get_comm())   # doctest: +SKIP
    """
    from mpi4py.util.dtlib import from_numpy_dtype

    arr = np.ascontiguousarray(arr)
    counts = np.array(comm.gather(arr.size, root=root) or [], dtype=np.int64)
    mtype = from_numpy_dtype(arr.dtype)
    if comm.Get_rank() == root:
        out = np.empty(int(counts.sum()), dtype=arr.dtype)
        comm.Gatherv([arr, mtype], [out, (counts, exclusive_cumsum(counts)), mtype], root=root)
        return out
    comm.Gatherv([arr, mtype], None, root=root)
    return None


def scatterv(arr: np.ndarray | None, counts: np.ndarray, dtype, root: int, comm) -> np.ndarray:
    """Scatter consecutive pieces of ``arr`` (on ``root``) of ``counts[r]`` elements to rank r.

    Examples
    --------
    >>> scatterv(np.arange(3), np.array([3]), np.int64, 0, get_comm())   # doctest: +SKIP
    """
    from mpi4py.util.dtlib import from_numpy_dtype

    dtype = np.dtype(dtype)
    mtype = from_numpy_dtype(dtype)
    out = np.empty(int(counts[comm.Get_rank()]), dtype=dtype)
    if comm.Get_rank() == root:
        send = np.ascontiguousarray(arr, dtype=dtype)
        comm.Scatterv([send, (counts, exclusive_cumsum(counts)), mtype], [out, mtype], root=root)
    else:
        comm.Scatterv(None, [out, mtype], root=root)
    return out


def shuffle_edges(src, dst, w, partition: BlockPartition, comm):
    """Send each edge ``(src, dst, w)`` to the rank that owns ``src``; return what arrives.

    Collective (one ``Alltoall`` of counts and one ``Alltoallv`` per array).

    Examples
    --------
    >>> s, d, w = shuffle_edges(src, dst, w, part, comm)   # doctest: +SKIP
    """
    counts = np.zeros(partition.nparts, dtype=np.int64)
    perm = np.empty(src.size, dtype=np.int64)
    _k.group_by_owner(src, partition.offsets, counts, perm)
    recvcounts = exchange_counts(counts, comm)
    out = []
    for arr in (src, dst, w):
        out.append(alltoallv(arr[perm], counts, recvcounts, comm))
    return tuple(out)


def local_csr(src, dst, w, lo: int, hi: int):
    """Build this rank's rows ``lo .. hi-1`` from edges whose sources it owns.

    Rows are sorted by target and duplicates keep their smallest weight, as in
    :class:`graphpar.Graph`. Returns ``(indptr, indices, weights)``.

    Examples
    --------
    >>> ip, ix, ww = local_csr(np.array([1]), np.array([0]), np.array([2.0]), 1, 2)
    >>> ip.tolist(), ix.tolist(), ww.tolist()
    ([0, 1], [0], [2.0])
    """
    ln = hi - lo
    rows = (np.asarray(src, dtype=np.int64) - lo)
    counts = np.zeros(ln, dtype=np.int64)
    _csr.count_degrees(rows, dst, False, counts)
    indptr = np.zeros(ln + 1, dtype=np.int64)
    np.cumsum(counts, out=indptr[1:])
    cols = np.empty(rows.size, dtype=dst.dtype)
    vals = np.empty(rows.size, dtype=np.float64)
    _csr.scatter_rows(rows, dst, np.asarray(w, dtype=np.float64), False, indptr,
                      np.array([0, ln], dtype=np.int64), cols, vals)
    new_counts = np.empty(ln, dtype=np.int64)
    _csr.sort_rows(indptr, cols, vals)
    _csr.dedupe_sorted_rows(indptr, cols, vals, new_counts)
    new_indptr = np.zeros(ln + 1, dtype=np.int64)
    np.cumsum(new_counts, out=new_indptr[1:])
    if new_indptr[-1] != cols.size:
        c2 = np.empty(new_indptr[-1], dtype=cols.dtype)
        v2 = np.empty(new_indptr[-1], dtype=np.float64)
        _csr.compact_rows(indptr, new_indptr, cols, vals, c2, v2)
        cols, vals = c2, v2
    return new_indptr, cols, vals


def distribute_graph(graph, root: int = 0, *, partition: BlockPartition | None = None,
                     progress: bool | None = False, comm=None) -> DistGraph:
    """Distribute a graph held on ``root`` (any graphpar.sssp input) to every rank.

    Parameters
    ----------
    graph : Graph, scipy sparse or dense array, or None
        The whole graph on ``root``; ignored elsewhere.
    root : int, default 0
    partition : BlockPartition, optional
        Default: balanced by edges (:meth:`BlockPartition.edge_balanced`).
    progress : bool or None, default False
        Report the steps (checking and partitioning, then scattering the
        degrees, targets and weights) on stderr, from ``root`` alone
        (:func:`graphpar.progress.progress`).
    comm : mpi4py.MPI.Comm, optional

    Returns
    -------
    DistGraph
        Collective: every rank gets its rows; a labelled graph's labels go
        to rank 0 (``DistGraph.labels``).

    Examples
    --------
    >>> dg = distribute_graph(g if comm.rank == 0 else None)   # doctest: +SKIP
    """
    from graphpar.progress import progress as report

    comm = get_comm(comm)
    with report(4, "distributing the graph", unit="step",
                enabled=progress if comm.Get_rank() == root else False) as bar:
        return _distribute(graph, root, partition, comm, bar)


def _distribute(graph, root: int, partition, comm, bar) -> DistGraph:
    """:func:`distribute_graph`'s steps, each ending in ``bar.update()``."""
    from graphpar._validation import validate_graph
    from graphpar.mpi.comm import run_collectively

    def check():
        if comm.Get_rank() != root:
            return None, None
        g = validate_graph(graph, True, weights="any", name="graph")
        part = partition or BlockPartition.edge_balanced(g.indptr, comm.Get_size())
        if part.n != g.n or part.nparts != comm.Get_size():
            raise ValueError(
                f"partition is for {part.n} vertices in {part.nparts} parts; the graph "
                f"has {g.n} vertices and the communicator {comm.Get_size()} ranks"
            )
        return g, (part.offsets, g.directed, g.nnz, g.labels is not None)

    g, meta = run_collectively(check, comm)
    offsets, directed, gnnz, labelled = comm.bcast(meta, root=root)
    bar.update()
    part = BlockPartition(offsets)
    off = part.offsets
    if comm.Get_rank() == root:
        deg = np.diff(g.indptr)
        ecounts = g.indptr[off[1:]] - g.indptr[off[:-1]]
    else:
        g = deg = ecounts = None
    graph_labels = None if g is None else g.labels
    ecounts = comm.bcast(ecounts, root=root)
    vcounts = np.diff(off)
    ldeg = scatterv(deg, vcounts, np.int64, root, comm)
    bar.update()
    idx_dtype = index_dtype(part.n)
    indices = scatterv(None if g is None else g.indices, ecounts, idx_dtype, root, comm)
    bar.update()
    weights = scatterv(None if g is None else g.weights, ecounts, np.float64, root, comm)
    bar.update()
    indptr = np.zeros(ldeg.size + 1, dtype=np.int64)
    np.cumsum(ldeg, out=indptr[1:])
    labels = None
    if labelled:  # the labels live on rank 0
        if root != 0:
            labels = comm.recv(source=root) if comm.Get_rank() == 0 else None
            if comm.Get_rank() == root:
                comm.send(graph_labels, dest=0)
        else:
            labels = graph_labels
    return DistGraph(part, indptr, indices, weights, directed=directed, gnnz=gnnz,
                     labels=labels, labelled=labelled, comm=comm)
