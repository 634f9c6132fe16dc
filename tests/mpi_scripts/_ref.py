"""Slow, obvious references for the MPI checks (no graphpar code involved)."""

from __future__ import annotations

import numpy as np


def check_predecessors(A, directed: bool, source: int, dist, pred) -> None:
    """Assert that ``pred`` is a shortest-path tree for ``dist`` on the scipy matrix ``A``.

    Every reached vertex other than the source has a predecessor ``p`` with an
    edge ``(p, v)`` whose weight ``w`` gives ``dist[p] + w == dist[v]``; the
    source and the unreached vertices have ``-9999``; following predecessors
    from any vertex reaches the source.
    """
    A = A.tocsr()
    n = A.shape[0]
    best = {}
    coo = A.tocoo()
    for u, v, w in zip(coo.row.tolist(), coo.col.tolist(), coo.data.tolist(), strict=True):
        pairs = [(u, v)] if directed else [(u, v), (v, u)]
        for a, b in pairs:
            best[(a, b)] = min(best.get((a, b), np.inf), w)
    for v in range(n):
        p = int(pred[v])
        if v == source or not np.isfinite(dist[v]):
            assert p == -9999, (v, p)
            continue
        assert (p, v) in best, f"pred[{v}] = {p} but there is no edge ({p}, {v})"
        assert dist[p] + best[(p, v)] == dist[v], (p, v, dist[p], best[(p, v)], dist[v])
        seen = 0
        x = v
        while x != source:
            x = int(pred[x])
            seen += 1
            assert seen <= n, f"predecessors from {v} form a cycle"
