"""The one input validator used at every public entry point that takes a graph."""

from __future__ import annotations

import numbers

import numpy as np

from graphpar.graph import Graph, is_scipy_sparse
from graphpar.kernels import csr as _csr


def validate_graph(
    csgraph,
    directed: bool = True,
    *,
    weights: str = "nonnegative",
    name: str = "csgraph",
) -> Graph:
    """Convert any supported graph input to a :class:`Graph` and check its weights.

    Parameters
    ----------
    csgraph : Graph, scipy sparse matrix or array, or array_like
        The graph. Sparse input: every stored entry is an edge. Dense input:
        0, inf and nan mean "no edge".
    directed : bool, default True
        With ``False`` the returned graph holds every edge both ways.
    weights : {"nonnegative", "finite", "any"}
        What the calling kernel accepts. NaN weights are always rejected;
        ``"nonnegative"`` also rejects negative weights, ``"finite"`` rejects
        negative and infinite ones.
    name : str
        Argument name used in error messages.

    Returns
    -------
    Graph
        A graph the kernels can use directly. The input is never modified.

    Raises
    ------
    TypeError
        For an unsupported input type or a non-numeric dtype.
    ValueError
        For a non-square shape, out-of-range indices, or rejected weights,
        naming the first offending edge ``(u, v, w)``.

    Examples
    --------
    >>> import numpy as np
    >>> validate_graph(np.array([[0, 1], [0, 0]])).nnz
    1
    >>> validate_graph(np.array([[0, -1], [0, 0]]))
    Traceback (most recent call last):
    ...
    ValueError: csgraph has a negative edge weight: edge (0, 1, -1.0); this method needs \
weights >= 0
    """
    return _validate_with_max_weight(csgraph, directed, weights, name)[0]


def _validate_with_max_weight(csgraph, directed, weights, name) -> tuple[Graph, float]:
    """:func:`validate_graph`, also returning the largest finite weight ``>= 0`` (0.0 if none).

    The weight check and the maximum come from the same pass over the weights.
    """
    if isinstance(csgraph, Graph):
        g = csgraph
    elif is_scipy_sparse(csgraph):
        if csgraph.ndim != 2 or csgraph.shape[0] != csgraph.shape[1]:
            raise ValueError(
                f"{name} must be a square (n, n) matrix, got shape {csgraph.shape}"
            )
        if csgraph.dtype.kind == "c":
            raise TypeError(f"{name} weights must be real, got complex dtype {csgraph.dtype}")
        g = Graph.from_scipy(csgraph, directed=True)
    else:
        try:
            arr = np.asarray(csgraph)
        except Exception as exc:  # noqa: BLE001 - any conversion failure is a type error here
            raise TypeError(
                f"{name} must be a Graph, a scipy sparse matrix or array, or a dense "
                f"array, got {type(csgraph).__name__}"
            ) from exc
        if arr.dtype.kind == "c":
            raise TypeError(f"{name} weights must be real, got complex dtype {arr.dtype}")
        if arr.dtype.kind not in "biuf":
            raise TypeError(
                f"{name} must be a Graph, a scipy sparse matrix or array, or a dense "
                f"array, got {type(csgraph).__name__}"
            )
        if arr.ndim != 2 or arr.shape[0] != arr.shape[1]:
            raise ValueError(f"{name} must be a square (n, n) matrix, got shape {arr.shape}")
        g = Graph.from_dense(arr, directed=True)
    if not directed:
        g = g.symmetrized()
    return g, _check_weights(g, weights, name)


def _check_weights(g: Graph, rule: str, name: str) -> float:
    """Raise for a weight ``rule`` rejects; return the largest finite weight >= 0 (0.0 if none)."""
    if rule not in ("nonnegative", "finite", "any"):
        raise ValueError(f"weights rule must be 'nonnegative', 'finite' or 'any', got {rule!r}")
    if g.weights.size == 0:
        return 0.0
    chunks = 64 if g.weights.size >= 1 << 20 else 1
    k, code, wmax = _csr.first_bad_weight(
        g.weights, rule in ("nonnegative", "finite"), rule == "finite", chunks
    )
    if k < 0:
        return float(wmax)
    u = int(np.searchsorted(g.indptr, k, side="right") - 1)
    edge = f"edge ({u}, {int(g.indices[k])}, {float(g.weights[k])})"
    if code == 1:
        raise ValueError(f"{name} has a NaN edge weight: {edge}")
    if code == 2:
        raise ValueError(
            f"{name} has a negative edge weight: {edge}; this method needs weights >= 0"
        )
    raise ValueError(f"{name} has an infinite edge weight: {edge}")


def check_sources(source, n: int, name: str = "source") -> tuple[np.ndarray, bool]:
    """Validate source vertices against ``n``.

    Returns
    -------
    sources : ndarray of int64, shape (k,)
    scalar : bool
        True when ``source`` was a single integer (results then drop the
        leading axis, as scipy's ``indices=int`` does).

    Examples
    --------
    >>> check_sources(3, 5)
    (array([3]), True)
    >>> check_sources([1, 7], 5)
    Traceback (most recent call last):
    ...
    ValueError: source[1] = 7 is out of range for a graph with 5 vertices
    """
    if isinstance(source, (bool, np.bool_)):
        raise TypeError(f"{name} must be an integer or a 1-D array of integers, got {source!r}")
    if isinstance(source, numbers.Integral):
        s = int(source)
        if not -n <= s < n or n == 0:
            raise ValueError(f"{name} = {s} is out of range for a graph with {n} vertices")
        return np.array([s % n], dtype=np.int64), True
    arr = np.asarray(source)
    if arr.ndim != 1 or (arr.size and arr.dtype.kind not in "iu"):
        raise TypeError(
            f"{name} must be an integer or a 1-D array of integers, got "
            f"{type(source).__name__} with shape {arr.shape} and dtype {arr.dtype}"
        )
    arr = arr.astype(np.int64)
    bad = np.flatnonzero((arr < -n) | (arr >= n))
    if bad.size:
        i = int(bad[0])
        raise ValueError(
            f"{name}[{i}] = {int(arr[i])} is out of range for a graph with {n} vertices"
        )
    return arr % max(n, 1), False
