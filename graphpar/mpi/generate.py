"""Distributed generation: each rank generates its share of the edges of one global graph.

The generators of :mod:`graphpar.generate` define edge ``k`` as a pure function
of ``(seed, k)``; rank ``r`` of ``P`` generates edges ``[r m / P, (r+1) m / P)``
(:func:`graphpar.generate.edge_range`) and the edges are shuffled to the ranks
that own their sources. The graph is therefore the same for any number of
ranks, and gathered it equals the serial generator's graph byte for byte.

Before anything is allocated, the memory that the ranks of each node will
need together is checked against :func:`graphpar.limits.memory_budget`
(:func:`check_rank_memory`): a graph too large fails on every rank alike with
one :class:`graphpar.errors.LimitError`.
"""

from __future__ import annotations

from graphpar.mpi._graph import DistGraph
from graphpar.mpi.blocks import BlockPartition
from graphpar.mpi.comm import get_comm, node_info, run_collectively

__all__ = ["kronecker", "uniform", "grid_road", "check_rank_memory"]


def check_rank_memory(gn: int, m: int, directed: bool, what: str, comm=None) -> None:
    """Refuse a generated graph whose share would not fit the ranks of this node.

    Each rank holds about ``1/P`` of the edges, and twice that while they are
    shuffled to their owners; the ranks on one node share its memory. Raises
    :class:`graphpar.errors.LimitError` naming ``what`` on every rank alike
    (the ranks agree on the outcome). Collective.

    Examples
    --------
    >>> check_rank_memory(2**40, 2**44, False, "kron:40")   # doctest: +SKIP
    Traceback (most recent call last):
    ...
    graphpar.errors.LimitError: kron:40 (1099511627776 vertices, 17592186044416 edges) ...
    """
    from graphpar.generate import generation_bytes
    from graphpar.limits import check_memory

    comm = get_comm(comm)
    size = comm.Get_size()
    _, node_size, _ = node_info(comm)
    per_rank = generation_bytes(gn, m, directed) // size
    if size > 1:
        per_rank *= 2  # the shuffle holds the edges twice
    where = f"{size} ranks, {node_size} on this node" if size > 1 else "1 rank"
    # nodes may differ: agree, so that no rank goes on into a collective alone
    run_collectively(
        lambda: check_memory(per_rank * node_size,
                             what=f"{what} ({gn} vertices, {m} edges; {where})"),
        comm,
    )


def _generate(kind, m, gn, directed, partition, comm, seed, weights, max_weight, what,
              progress=False, **params):
    from graphpar.generate import edge_range

    comm = get_comm(comm)
    rank, size = comm.Get_rank(), comm.Get_size()
    start, stop = (m * rank) // size, (m * (rank + 1)) // size

    def local_edges():
        if partition is not None and (partition.n != gn or partition.nparts != size):
            raise ValueError(
                f"partition is for {partition.n} vertices in {partition.nparts} parts; the "
                f"graph has {gn} vertices and the communicator {size} ranks"
            )
        # rank 0 reports its share: the ranks generate equal shares at the same pace
        return edge_range(kind, start, stop, seed=seed, weights=weights,
                          max_weight=max_weight, progress=progress and rank == 0, **params)

    check_rank_memory(gn, m, directed, what, comm)
    src, dst, w = run_collectively(local_edges, comm)
    return DistGraph.from_local_edges(src, dst, w, gn, directed=directed,
                                      partition=partition, comm=comm)


def kronecker(scale: int, edgefactor: int = 16, *, seed: int = 0, a: float = 0.57,
              b: float = 0.19, c: float = 0.19, weights: str | None = "int",
              max_weight: int = 255, directed: bool = False,
              partition: BlockPartition | None = None, comm=None,
              progress: bool | None = False) -> DistGraph:
    """Graph500 Kronecker graph generated in parallel (see :func:`graphpar.generate.kronecker`).

    Collective; ``partition`` defaults to equal vertex blocks (the vertex
    relabelling spreads the high-degree vertices over them). ``progress``
    reports rank 0's share of the edges (:func:`graphpar.progress.progress`),
    as do :func:`uniform` and :func:`grid_road`.

    Examples
    --------
    >>> dg = kronecker(20)   # each of K ranks generates 1/K of the edges  # doctest: +SKIP
    """
    from graphpar.generate import check_kronecker_args

    scale, edgefactor, a, b, c = check_kronecker_args(scale, edgefactor, a, b, c)
    return _generate("kronecker", edgefactor << scale, 1 << scale, bool(directed), partition,
                     comm, seed, weights, max_weight,
                     f"kronecker(scale={scale}, edgefactor={edgefactor})",
                     progress, scale=scale, a=a, b=b, c=c)


def uniform(n: int, m: int, *, seed: int = 0, weights: str | None = "int",
            max_weight: int = 255, directed: bool = True,
            partition: BlockPartition | None = None, comm=None,
            progress: bool | None = False) -> DistGraph:
    """Uniform random graph generated in parallel (see :func:`graphpar.generate.uniform`).

    Examples
    --------
    >>> dg = uniform(1000, 8000)   # doctest: +SKIP
    """
    from graphpar._validation import check_int

    n, m = check_int("n", n, 1), check_int("m", m, 0)
    return _generate("uniform", m, n, bool(directed), partition, comm, seed, weights,
                     max_weight, f"uniform(n={n}, m={m})", progress, n=n)


def grid_road(rows: int, cols: int | None = None, *, seed: int = 0, max_weight: int = 255,
              partition: BlockPartition | None = None, comm=None,
              progress: bool | None = False) -> DistGraph:
    """Road-like grid generated in parallel (see :func:`graphpar.generate.grid_road`).

    Examples
    --------
    >>> dg = grid_road(1000)   # 1 million vertices  # doctest: +SKIP
    """
    from graphpar._validation import check_int

    rows = check_int("rows", rows, 1)
    cols = rows if cols is None else check_int("cols", cols, 1)
    m = rows * (cols - 1) + (rows - 1) * cols
    return _generate("grid", m, rows * cols, False, partition, comm, seed, "int", max_weight,
                     f"grid_road(rows={rows}, cols={cols})", progress, rows=rows, cols=cols)
