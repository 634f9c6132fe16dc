"""Slow, obvious references for the graph container: dicts of edges built with Python loops."""

from __future__ import annotations

import math


def min_edge_dict(rows, cols, vals, directed=True):
    """{(u, v): w} keeping the smallest weight of duplicates (a NaN among them wins)."""
    out = {}
    pairs = list(zip(rows, cols, vals, strict=True))
    if not directed:
        pairs += [(c, r, v) for r, c, v in pairs]
    for r, c, v in pairs:
        key = (int(r), int(c))
        v = float(v)
        if key not in out:
            out[key] = v
        elif math.isnan(v) or (not math.isnan(out[key]) and v < out[key]):
            out[key] = v
    return out


def dense_edge_dict(M):
    """{(u, v): w} for a dense matrix: 0, inf, -inf and nan are not edges."""
    out = {}
    n = len(M)
    for i in range(n):
        for j in range(n):
            x = float(M[i][j])
            if x != 0 and not math.isinf(x) and not math.isnan(x):
                out[(i, j)] = x
    return out


def graph_edge_dict(g):
    """{(u, v): w} read from a Graph's CSR arrays with plain loops; also checks row order."""
    out = {}
    for u in range(g.n):
        prev = -1
        for k in range(int(g.indptr[u]), int(g.indptr[u + 1])):
            v = int(g.indices[k])
            assert v > prev, f"row {u} is not sorted or has a duplicate at {k}"
            prev = v
            out[(u, v)] = float(g.weights[k])
    return out


def same_edges(a, b):
    """Equal dicts of edges, NaN equal to NaN."""
    if a.keys() != b.keys():
        return False
    for k, x in a.items():
        y = b[k]
        if not (x == y or (math.isnan(x) and math.isnan(y))):
            return False
    return True
