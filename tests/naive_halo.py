"""Slow, obvious references for the halo-exchange plan: loops over every stored entry."""

from __future__ import annotations

import numpy as np


def owner_of(offsets, v: int) -> int:
    for r in range(len(offsets) - 1):
        if offsets[r] <= v < offsets[r + 1]:
            return r
    raise ValueError(v)


def needed_rows(dense: np.ndarray, offsets) -> dict[int, dict[int, set[int]]]:
    """needs[r][q] = set of global rows of H that rank r needs from rank q (q != r)."""
    p = len(offsets) - 1
    needs: dict[int, dict[int, set[int]]] = {r: {} for r in range(p)}
    n = dense.shape[0]
    for i in range(n):
        r = owner_of(offsets, i)
        for j in range(n):
            if dense[i, j] != 0:
                q = owner_of(offsets, j)
                if q != r:
                    needs[r].setdefault(q, set()).add(j)
    return needs


def connectivity_volume(dense: np.ndarray, part) -> int:
    """Sum over columns j of the parts, other than j's own, holding a row that references j."""
    n = dense.shape[0]
    total = 0
    for j in range(n):
        parts = {int(part[i]) for i in range(n) if dense[i, j] != 0}
        parts.discard(int(part[j]))
        total += len(parts)
    return total
