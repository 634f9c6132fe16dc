"""Slow, obvious references for shortest paths: Bellman-Ford and a tree checker."""

from __future__ import annotations

import math

import numpy as np


def edge_list(A, directed: bool = True) -> list[tuple[int, int, float]]:
    """Edges ``(u, v, w)`` of a scipy sparse matrix (explicit zeros included)."""
    coo = A.tocoo()
    rows = zip(coo.row, coo.col, coo.data, strict=True)
    edges = [(int(u), int(v), float(w)) for u, v, w in rows]
    if not directed:
        edges += [(v, u, w) for u, v, w in edges]
    return edges


def bellman_ford(n: int, edges, source: int, limit: float = math.inf) -> np.ndarray:
    """Relax every edge until nothing changes; sums in float64, one edge at a time."""
    d = [math.inf] * n
    d[source] = 0.0
    changed = True
    while changed:
        changed = False
        for u, v, w in edges:
            nd = d[u] + w
            if nd < d[v] and nd <= limit:
                d[v] = nd
                changed = True
    return np.array(d, dtype=np.float64)


def tree_problem(n: int, edges, source: int, dist, pred) -> str | None:
    """Return why ``pred`` is not a shortest-path tree for ``dist``, or None when it is."""
    best: dict[tuple[int, int], list[float]] = {}
    for u, v, w in edges:
        best.setdefault((u, v), []).append(w)
    for v in range(n):
        p = int(pred[v])
        if v == source or not math.isfinite(dist[v]):
            if p != -9999:
                return f"pred[{v}] = {p}, expected -9999"
            continue
        if p == -9999:
            return f"reached vertex {v} has no predecessor"
        if (p, v) not in best or not any(dist[p] + w == dist[v] for w in best[(p, v)]):
            return f"pred[{v}] = {p} is not a tight edge"
    for v in range(n):
        seen = set()
        x = v
        while x != source and math.isfinite(dist[x]):
            if x in seen:
                return f"cycle through {x}"
            seen.add(x)
            x = int(pred[x])
    return None
