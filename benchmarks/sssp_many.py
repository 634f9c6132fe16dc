"""graphpar.csgraph.dijkstra against scipy.sparse.csgraph.dijkstra, many sources, one run.

For each graph (Kronecker graphs of a few sizes with U[0,1) weights, and grid
road graphs of a few sizes with integer weights 1..255), each thread count (1
and 2) and each machine state (idle, and busy: one spinning ``python -c
'while True: pass'`` process started for the repeat and killed after it),
every repeat times ``graphpar.csgraph.dijkstra(A, indices=sources)`` and
scipy's same call back to back, on the same CSR matrix and sources. The
script prints the medians, the ratio scipy / graphpar (above 1: graphpar is
faster), the throughput (sources per second), graphpar's CPU time (all its
threads) and, per graph and machine state, graphpar's 2-thread throughput
over its 1-thread one, in wall time and as ``2 x CPU(1 thread) / CPU(2
threads)`` (what the 2 threads would give if nothing else ran: it shows the
cost of their contention for caches and memory, not the scheduling delays).
The distances are checked equal to scipy's bit for bit. Times are wall-clock
(``time.perf_counter``): on a machine shared with other work, quote the load
average printed first.

Usage::

    python benchmarks/sssp_many.py [--repeat 5] [--sources 20] [--scales 10,14,17]
                                   [--rows 100,300,600] [--no-busy]
"""

from __future__ import annotations

import argparse
import contextlib
import os
import statistics
import subprocess
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _timing import fmt_ratio  # noqa: E402


def graphs(scales, rows):
    import graphpar

    rng = np.random.default_rng(0)
    for s in scales:
        g = graphpar.generate.kronecker(s, seed=1)
        A = g.to_scipy().tocsr()
        A.data = rng.random(A.nnz)  # real weights: many distinct distances
        yield f"kron:{s} U[0,1)", A
    for r in rows:
        g = graphpar.generate.grid_road(r, r, seed=1)
        yield f"grid:{r}", g.to_scipy().tocsr()


def timed(ours, theirs, repeat: int) -> tuple[float, float, float]:
    """Medians of ``repeat`` rounds, each timing ``ours()`` then ``theirs()`` back to back
    (after one warm-up round): ``(ours wall, theirs wall, ours CPU)``. The CPU time counts
    all of this process's threads: 2 threads doing the work of 1 in about the same CPU
    time scale well even when other work on the machine stretches their wall time."""
    ours()
    theirs()
    walls, refs, cpus = [], [], []
    for _ in range(repeat):
        c0, t0 = time.process_time(), time.perf_counter()
        ours()
        t1 = time.perf_counter()
        cpus.append(time.process_time() - c0)
        theirs()
        refs.append(time.perf_counter() - t1)
        walls.append(t1 - t0)
    return statistics.median(walls), statistics.median(refs), statistics.median(cpus)


@contextlib.contextmanager
def machine(state: str):
    """``"idle"``: nothing; ``"busy"``: one spinning Python process for the duration."""
    if state == "idle":
        yield
        return
    spin = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        yield
    finally:
        spin.kill()
        spin.wait(timeout=30)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--sources", type=int, default=20)
    ap.add_argument("--scales", default="10,14,17")
    ap.add_argument("--rows", default="100,300,600", help="grid sizes (rows = columns)")
    ap.add_argument("--no-busy", action="store_true", help="skip the busy-machine runs")
    args = ap.parse_args(argv)

    from scipy.sparse.csgraph import dijkstra as scipy_dijkstra

    from graphpar._csgraph import plan
    from graphpar.csgraph import dijkstra
    from graphpar.threads import set_threads

    states = ("idle",) if args.no_busy else ("idle", "busy")
    print(f"load average: {os.getloadavg()}  (others' work shares these cores)")
    print(f"{'graph':<16} {'edges':>9} {'machine':>7} {'thr':>3} {'graphpar s':>11} "
          f"{'scipy s':>9} {'scipy/gp':>8} {'src/s':>8} {'gp cpu s':>9}")
    scales = [int(s) for s in args.scales.split(",") if s]
    rows = [int(r) for r in args.rows.split(",") if r]
    worst = None
    for name, A in graphs(scales, rows):
        rng = np.random.default_rng(2)
        src = rng.choice(np.flatnonzero(np.diff(A.indptr)), args.sources, replace=False)
        for state in states:
            throughput, cpu = {}, {}
            for threads in (1, 2):
                set_threads(threads)
                np.testing.assert_array_equal(dijkstra(A, indices=src),
                                              scipy_dijkstra(A, indices=src))
                ours = lambda A=A, src=src: dijkstra(A, indices=src)  # noqa: E731
                theirs = lambda A=A, src=src: scipy_dijkstra(A, indices=src)  # noqa: E731
                with machine(state):
                    gp, sc, cpu[threads] = timed(ours, theirs, args.repeat)
                throughput[threads] = src.size / gp
                worst = min(worst or np.inf, sc / gp)
                print(f"{name:<16} {A.nnz:>9} {state:>7} {threads:>3} {gp:>11.4f} "
                      f"{sc:>9.4f} {fmt_ratio(sc, gp):>8} {throughput[threads]:>8.1f} "
                      f"{cpu[threads]:>9.4f}")
            kind, used = plan(src.size, A.nnz, 2, False)
            if used == 1:
                print(f"{name:<16} {state}: small work, one thread at either setting ({kind})")
                continue
            print(f"{name:<16} {state}: 2-thread / 1-thread throughput: "
                  f"{throughput[2] / throughput[1]:.2f}x wall, "
                  f"{2 * cpu[1] / cpu[2]:.2f}x from CPU time (2 x CPU 1 / CPU 2)")
    print(f"smallest scipy/graphpar ratio: {worst:.2f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
