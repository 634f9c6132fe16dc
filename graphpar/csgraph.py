"""A drop-in for ``scipy.sparse.csgraph``'s shortest paths, on every core.

Replace ``from scipy.sparse.csgraph import dijkstra, shortest_path`` with
``from graphpar.csgraph import dijkstra, shortest_path``: same arguments in the
same order, same defaults, same result shapes and dtypes, the same ``-9999``
for "no predecessor", and distances equal to scipy's bit for bit.

What differs:

* Speed: many sources run one serial search per thread, with no
  synchronisation between them (plain threads, kept between calls, taking the
  next source from a shared counter, so a thread slowed by another busy
  process holds up only its current source, and a call whose sources are all
  done does not wait for a thread that has not started); small work runs on
  one thread; one source (or fewer than threads) on a
  large graph runs graphpar's parallel delta-stepping (:func:`graphpar.sssp`);
  ``min_only=True`` is one multi-source search. Threads follow
  :func:`graphpar.set_threads`.
* Predecessors on ties: when two shortest paths to a vertex have exactly the
  same length, the predecessor may differ from scipy's (scipy's depends on
  the order in which its Fibonacci heap returns equal keys; graphpar's on its
  4-ary heap's, or with delta-stepping it is the smallest-numbered vertex
  that has a strictly smaller distance). Either way ``predecessors`` is a
  shortest-path tree: ``scipy.sparse.csgraph.reconstruct_path`` accepts it
  and every path it gives has the reported length. Without ties the
  predecessors are scipy's.

Handed to scipy itself, so that the result is scipy's exactly: a graph with a
negative weight (scipy warns with a ``UserWarning`` and returns its result),
and every :func:`shortest_path` method other
than Dijkstra (``'FW'``, ``'BF'``, ``'J'``, and ``'auto'`` when scipy would
pick one of those).
"""

from __future__ import annotations

import numpy as np

from graphpar import _csgraph

__all__ = ["dijkstra", "shortest_path"]


def dijkstra(csgraph, directed: bool = True, indices=None, return_predecessors: bool = False,
             unweighted: bool = False, limit: float = np.inf, min_only: bool = False):
    """Shortest paths by Dijkstra's algorithm: ``scipy.sparse.csgraph.dijkstra``, in parallel.

    Parameters
    ----------
    csgraph : array_like, scipy sparse matrix or array, or graphpar.Graph, shape (N, N)
        The graph (a :class:`graphpar.Graph` as its stored matrix,
        ``g.to_scipy()``), converted exactly as scipy converts it: a stored sparse
        entry is an edge (an explicit zero is a zero-weight edge); COO
        duplicates are summed, duplicates stored in CSR/CSC rows are all
        scanned (the smallest wins); in dense input 0, inf, NaN and every
        value within ``1e-8`` of zero (scipy's tolerance) mean "no edge".
        Weights should be ``>= 0``.
    directed : bool, default True
        ``False`` follows every edge both ways.
    indices : int or array_like of int, optional
        The sources (negative values count from the end); any shape. Default:
        every vertex (all pairs).
    return_predecessors : bool, default False
        Also return the predecessors (and with ``min_only`` the sources).
    unweighted : bool, default False
        Count edges instead of adding weights.
    limit : float, default inf
        Vertices farther than this are unreachable (``inf``, ``-9999``).
    min_only : bool, default False
        One search from all of ``indices`` at once: the distance to the
        nearest source.

    Returns
    -------
    dist_matrix : ndarray of float64, shape ``indices.shape + (N,)``, or (N,) with ``min_only``
    predecessors : ndarray of int32, the same shape
        Only with ``return_predecessors``: the vertex before ``j`` on a
        shortest path, ``-9999`` for the sources and unreachable vertices.
    sources : ndarray of int32, shape (N,)
        Only with ``min_only`` and ``return_predecessors``: the source each
        vertex is reached from (``-9999`` when unreachable).

    Raises
    ------
    ValueError
        A non-square graph, ``indices`` out of range, ``limit < 0``.
    TypeError
        Input scipy cannot convert to a float64 graph; a ``limit`` that is not
        a real number (a string neither, as in scipy).

    Warns
    -----
    UserWarning
        A negative weight (scipy's own warning; the call is scipy's).

    See Also
    --------
    graphpar.sssp : the same search with graphpar's own options (delta, stats).

    Examples
    --------
    >>> import numpy as np
    >>> from scipy.sparse import csr_array
    >>> G = csr_array(np.array([[0, 1, 2, 0], [0, 0, 0, 1], [0, 0, 0, 3], [0, 0, 0, 0]]))
    >>> dist, pred = dijkstra(G, directed=False, indices=0, return_predecessors=True)
    >>> dist
    array([0., 1., 2., 2.])
    >>> pred
    array([-9999,     0,     0,     1], dtype=int32)
    >>> dijkstra(G, indices=[0, 3], min_only=True)
    array([0., 1., 2., 0.])
    >>> dijkstra(G).shape
    (4, 4)
    """
    return _csgraph.dijkstra(csgraph, directed, indices, return_predecessors, unweighted,
                             limit, min_only)


def shortest_path(csgraph, method: str = "auto", directed: bool = True,
                  return_predecessors: bool = False, unweighted: bool = False,
                  overwrite: bool = False, indices=None):
    """Shortest paths: ``scipy.sparse.csgraph.shortest_path``, with graphpar's Dijkstra.

    ``method='auto'`` chooses as scipy does (Dijkstra unless the graph is
    dense and ``indices`` is None, which picks Floyd-Warshall, or has a
    negative weight, which picks Johnson). Dijkstra runs as
    :func:`dijkstra`; every other method is scipy's own call.

    Parameters
    ----------
    csgraph : array_like, scipy sparse matrix or array, or graphpar.Graph, shape (N, N)
        As for :func:`dijkstra`.
    method : {'auto', 'D', 'FW', 'BF', 'J'}, default 'auto'
    directed, return_predecessors, unweighted : bool
        As for :func:`dijkstra`.
    overwrite : bool, default False
        Floyd-Warshall only: may overwrite a dense float64 C-ordered input.
        With Dijkstra graphpar never writes into the input (scipy's Dijkstra
        may alter a dense input given with ``overwrite=True``).
    indices : int or array_like of int, optional
        The sources; default every vertex. Not allowed with ``'FW'``.

    Returns
    -------
    dist_matrix : ndarray of float64
    predecessors : ndarray of int32
        Only with ``return_predecessors``.

    Raises
    ------
    ValueError
        An unknown ``method``, ``indices`` with ``'FW'``, or as :func:`dijkstra`.
    scipy.sparse.csgraph.NegativeCycleError
        A negative cycle (methods 'FW', 'BF', 'J').

    Examples
    --------
    >>> import numpy as np
    >>> from scipy.sparse import csr_array
    >>> G = csr_array(np.array([[0, 1, 2, 0], [0, 0, 0, 1], [2, 0, 0, 3], [0, 0, 0, 0]]))
    >>> shortest_path(G, directed=False, indices=0)
    array([0., 1., 2., 2.])
    >>> shortest_path(G, method="D")[2]
    array([2., 3., 0., 3.])
    """
    return _csgraph.shortest_path(csgraph, method, directed, return_predecessors, unweighted,
                                  overwrite, indices)
