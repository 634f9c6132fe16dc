"""Slow, obvious readers of the text graph formats (line by line), as test references."""

from __future__ import annotations


def read_gr_naive(path):
    """(n, [(u, v, w), ...]) from a DIMACS .gr file, 0-based, arcs in file order."""
    n = None
    arcs = []
    with open(path) as f:
        for line in f:
            parts = line.split()
            if not parts or parts[0] == "c":
                continue
            if parts[0] == "p":
                n = int(parts[2])
            elif parts[0] == "a":
                arcs.append((int(parts[1]) - 1, int(parts[2]) - 1, float(parts[3])))
    return n, arcs


def min_dict(arcs):
    """{(u, v): smallest w} over a list of (u, v, w)."""
    out = {}
    for u, v, w in arcs:
        if (u, v) not in out or w < out[(u, v)]:
            out[(u, v)] = w
    return out
