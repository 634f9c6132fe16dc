"""Slow, obvious references for the GCN workload: dense loops, no scipy."""

from __future__ import annotations

import numpy as np


def dense_from_entries(n, rows, cols, vals) -> np.ndarray:
    """Dense matrix with duplicate entries summed."""
    M = np.zeros((n, n))
    for r, c, v in zip(rows, cols, vals, strict=True):
        M[r, c] += v
    return M


def normalize(M, self_loops=True, norm="sym") -> np.ndarray:
    """The GCN operator of the dense weighted adjacency ``M`` by the textbook formula."""
    n = M.shape[0]
    A = M + np.eye(n) if self_loops else M.copy()
    deg = [sum(A[i, j] for j in range(n)) for i in range(n)]
    # Kipf and Welling's convention: 1/0 is taken as 0 (a vertex without out-edges).
    inv = [1.0 / d if d > 0 else 0.0 for d in deg]
    out = np.zeros((n, n))
    for i in range(n):
        for j in range(n):
            if A[i, j] == 0:
                continue
            if norm == "sym":
                out[i, j] = A[i, j] * np.sqrt(inv[i]) * np.sqrt(inv[j])
            elif norm == "row":
                out[i, j] = A[i, j] * inv[i]
            else:
                out[i, j] = A[i, j]
    return out


def aggregate(M, H) -> np.ndarray:
    """``M @ H`` by loops, in float64."""
    m, k = M.shape
    out = np.zeros((m, H.shape[1]))
    for i in range(m):
        for j in range(k):
            if M[i, j] != 0:
                out[i] += M[i, j] * H[j].astype(np.float64)
    return out


def planetoid_reference(x, y, tx, ty, allx, ally, graph, test_index):
    """The public split by its meaning, from already-loaded Planetoid objects.

    Test vertex ``test_index[i]`` has features ``tx[i]`` and label ``ty[i]``;
    vertices ``0..len(allx)-1`` have ``allx``/``ally``; any other vertex (gaps
    in the test indices) has zero features and no label (-1). Train: the first
    ``len(y)``; validation: the next 500; test: ``test_index``.
    """
    allx = np.asarray(allx.todense()) if hasattr(allx, "todense") else np.asarray(allx)
    tx = np.asarray(tx.todense()) if hasattr(tx, "todense") else np.asarray(tx)
    n = max(allx.shape[0], max(test_index) + 1)
    feats = np.zeros((n, allx.shape[1]))
    labels = np.full(n, -1)
    for i in range(allx.shape[0]):
        feats[i] = allx[i]
        if np.any(ally[i]):
            labels[i] = int(np.argmax(ally[i]))
    for i, t in enumerate(test_index):
        feats[t] = tx[i]
        if np.any(ty[i]):
            labels[t] = int(np.argmax(ty[i]))
    adj = np.zeros((n, n))
    for u, nbrs in graph.items():
        for v in nbrs:
            adj[u, v] = adj[v, u] = 1.0
    train = np.zeros(n, bool)
    train[: len(y)] = True
    val = np.zeros(n, bool)
    val[len(y): len(y) + 500] = True
    test = np.zeros(n, bool)
    test[list(test_index)] = True
    return adj, feats, labels, train, val, test
