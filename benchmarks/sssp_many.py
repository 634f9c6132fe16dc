"""graphpar.csgraph.dijkstra against scipy.sparse.csgraph.dijkstra, many sources, one run.

For each graph (Kronecker graphs of a few sizes, U[0,1) weights, and a grid
road graph) and each thread count (1 and 2), every repeat times
``graphpar.csgraph.dijkstra(A, indices=sources)`` and scipy's same call back to
back, on the same CSR matrix and sources; the script prints the medians, the
ratio scipy / graphpar (above 1: graphpar is faster), the throughput
(sources per second) and, per graph, graphpar's 2-thread throughput over its
1-thread one. The distances are checked equal to scipy's bit for bit.

Usage::

    python benchmarks/sssp_many.py [--repeat 5] [--sources 20] [--scales 10,14,17]
                                   [--rows 300]
"""

from __future__ import annotations

import argparse
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _timing import fmt_ratio, median_time  # noqa: E402


def graphs(scales, rows):
    import graphpar

    rng = np.random.default_rng(0)
    for s in scales:
        g = graphpar.generate.kronecker(s, seed=1)
        A = g.to_scipy().tocsr()
        A.data = rng.random(A.nnz)  # real weights: many distinct distances
        yield f"kron:{s} U[0,1)", A
    g = graphpar.generate.grid_road(rows, rows, seed=1)
    yield f"grid:{rows}", g.to_scipy().tocsr()


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--sources", type=int, default=20)
    ap.add_argument("--scales", default="10,14,17")
    ap.add_argument("--rows", type=int, default=300)
    args = ap.parse_args(argv)

    from scipy.sparse.csgraph import dijkstra as scipy_dijkstra

    from graphpar.csgraph import dijkstra
    from graphpar.threads import set_threads

    print(f"load average: {os.getloadavg()}  (others' work shares these cores)")
    print(f"{'graph':<16} {'edges':>9} {'thr':>3} {'graphpar s':>11} {'scipy s':>9} "
          f"{'scipy/gp':>8} {'src/s':>8}")
    for name, A in graphs([int(s) for s in args.scales.split(",")], args.rows):
        rng = np.random.default_rng(2)
        src = rng.choice(np.flatnonzero(np.diff(A.indptr)), args.sources, replace=False)
        throughput = {}
        for threads in (1, 2):
            set_threads(threads)
            np.testing.assert_array_equal(dijkstra(A, indices=src),
                                          scipy_dijkstra(A, indices=src))
            ours = lambda A=A, src=src: dijkstra(A, indices=src)  # noqa: E731
            theirs = lambda A=A, src=src: scipy_dijkstra(A, indices=src)  # noqa: E731
            gp, _ = median_time(ours, repeat=args.repeat)
            sc, _ = median_time(theirs, repeat=args.repeat)
            throughput[threads] = src.size / gp
            print(f"{name:<16} {A.nnz:>9} {threads:>3} {gp:>11.4f} {sc:>9.4f} "
                  f"{fmt_ratio(sc, gp):>8} {throughput[threads]:>8.1f}")
        print(f"{name:<16} 2-thread / 1-thread throughput: "
              f"{throughput[2] / throughput[1]:.2f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
