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
