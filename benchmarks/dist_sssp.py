"""Distributed delta-stepping SSSP at 1 rank x 1 thread, 1 rank x 2 threads, 2 ranks x 1 thread.

Usage::

    python benchmarks/dist_sssp.py [--scale 20] [--grid 1000] [--reps 2] [--runs 5]

The driver launches one ``mpiexec`` job per configuration and graph,
interleaving the configurations ``--reps`` times so that background load on a
shared machine hits them alike. Each job generates its graph in parallel
(Kronecker ``--scale``, and a ``--grid`` x ``--grid`` road-like grid), picks
the same sources (vertices with at least one edge), runs SSSP once to warm up
and then ``--runs`` times, and reports the median time, the rounds
(bulk-synchronous exchanges), the buckets and the bytes each rank sent. The
driver prints per configuration the median over repetitions and the speed-up
over 1 rank x 1 thread (``vs 1x1`` > 1 means faster), the CPU time of the
busiest rank (``cpu_s``: process time, spinning in MPI included; on a loaded
machine it shows the work where wall time shows the waiting), the 1-minute
load average when the job ran, plus the serial
shared-memory ``graphpar.sssp`` and scipy's Dijkstra on the same graph and
sources for reference when the graph fits (``--reference``).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

from _mpi import add_driver_options, emit_result, run_interleaved, run_worker

CONFIGS = [(1, 1), (1, 2), (2, 1)]  # (ranks, threads per rank)


def worker(args) -> None:
    import numpy as np
    from mpi4py import MPI

    from graphpar.mpi import generate as dgen
    from graphpar.mpi._sssp import sssp
    from graphpar.mpi.comm import get_comm, setup_threads

    comm = get_comm()
    threads = setup_threads(args.threads)
    t0 = time.perf_counter()
    if args.graph.startswith("kron:"):
        dg = dgen.kronecker(int(args.graph[5:]), seed=args.seed)
    else:
        side = int(args.graph.split(":")[1])
        dg = dgen.grid_road(side, side, seed=args.seed)
    gen_time = comm.allreduce(time.perf_counter() - t0, op=MPI.MAX)
    # the same sources for every configuration: seeded candidates with an edge
    cand = np.random.default_rng(args.seed + 1).integers(0, dg.gn, 256)
    has_edge = np.zeros(cand.size, dtype=np.int64)
    mine = (cand >= dg.lo) & (cand < dg.hi)
    deg = np.diff(dg.indptr)
    has_edge[mine] = deg[cand[mine] - dg.lo] > 0
    comm.Allreduce(MPI.IN_PLACE, has_edge, op=MPI.MAX)
    sources = [int(s) for s in cand[has_edge > 0][: args.runs]]
    t0 = time.perf_counter()
    sssp(dg, sources[0])  # compile / caches (ghost relabelling, rows by weight)
    warm_time = comm.allreduce(time.perf_counter() - t0, op=MPI.MAX)
    times, cpus, rounds, buckets, sent, reached, work = [], [], [], [], [], [], []
    load = os.getloadavg()[0]
    for s in sources:
        comm.Barrier()
        t0 = time.perf_counter()
        c0 = time.process_time()
        dist, stats = sssp(dg, s, return_stats=True)
        cpus.append(comm.allreduce(time.process_time() - c0, op=MPI.MAX))
        times.append(comm.allreduce(time.perf_counter() - t0, op=MPI.MAX))
        rounds.append(stats.mpi.rounds)
        buckets.append(stats.mpi.buckets)
        sent.append(comm.allgather(stats.mpi.bytes_sent))
        reached.append(stats.reached)
        work.append(comm.allgather(int(deg[np.isfinite(dist)].sum())))
    out = {
        "graph": args.graph, "ranks": comm.Get_size(), "threads": threads,
        "gn": dg.gn, "gnnz": dg.gnnz, "gen_s": gen_time, "first_run_s": warm_time,
        "times": times, "median_s": statistics.median(times),
        "cpu_s": statistics.median(cpus), "load": load,
        "rounds": int(statistics.median(rounds)), "buckets": int(statistics.median(buckets)),
        "bytes_per_rank": [int(statistics.median(b[r] for b in sent))
                           for r in range(comm.Get_size())],
        "reached": reached, "sources": sources, "delta": stats.delta,
        "edges_per_rank": [int(statistics.median(x[r] for x in work))
                           for r in range(comm.Get_size())],
    }
    if args.reference and comm.Get_size() == 1:
        out.update(_reference(dg, sources))
    if comm.Get_rank() == 0:
        emit_result(out)


def comm_worker(args) -> None:
    """Measure one SSSP round (header Alltoall + small Alltoallv) and Alltoallv bandwidth."""
    import numpy as np
    from mpi4py import MPI

    from graphpar.mpi.comm import get_comm
    from graphpar.mpi.exchange import ialltoallv

    comm = get_comm()
    p = comm.Get_size()
    hs, hr = np.zeros((p, 4), np.int64), np.zeros((p, 4), np.int64)
    counts = np.full(p, 2, np.int64)
    send, recv = np.zeros(2 * p, np.int64), np.zeros(2 * p, np.int64)
    lat = []
    for rep in range(7):
        comm.Barrier()
        t0 = time.perf_counter()
        for _ in range(200):
            comm.Ialltoall(hs, hr).Wait()
            ialltoallv(send, counts, counts, comm, recv).Wait()
        if rep:
            lat.append(comm.allreduce(time.perf_counter() - t0, op=MPI.MAX) / 200)
    words = (8 << 20) // 8 // p  # 8 MiB sent per rank
    counts = np.full(p, words, np.int64)
    send, recv = np.zeros(words * p, np.int64), np.zeros(words * p, np.int64)
    bw = []
    for rep in range(6):
        comm.Barrier()
        t0 = time.perf_counter()
        ialltoallv(send, counts, counts, comm, recv).Wait()
        if rep:
            dt = comm.allreduce(time.perf_counter() - t0, op=MPI.MAX)
            bw.append(8 * words * (p - 1) / dt)
    if comm.Get_rank() == 0:
        emit_result({"round_s": statistics.median(lat),
                     "bytes_per_s": statistics.median(bw), "ranks": p})


def _reference(dg, sources) -> dict:
    """Serial graphpar.sssp and scipy's Dijkstra, same graph and sources."""
    import numpy as np
    from scipy.sparse.csgraph import dijkstra

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from _timing import median_time

    g = dg.gather()
    A = g.to_scipy()
    out = {}
    it = iter(sources * 10)
    med, _ = median_time(lambda: dijkstra(A, indices=next(it)), repeat=len(sources))
    out["scipy_s"] = med
    from graphpar import sssp as shared_sssp

    it = iter(sources * 10)
    med, _ = median_time(lambda: shared_sssp(g, next(it)), repeat=len(sources))
    out["shared_memory_s"] = med
    ref = dijkstra(A, indices=sources[0])
    from graphpar.mpi._sssp import sssp

    out["same_as_scipy"] = bool(np.array_equal(dg.gather_vertex_values(sssp(dg, sources[0])),
                                               ref))
    return out


def launch(graph, ranks, threads, args) -> dict:
    if graph == "comm":
        wargs = ["--comm-worker"]
    else:
        wargs = ["--worker", "--graph", graph, "--threads", str(threads), "--runs",
                 str(args.runs), "--seed", str(args.seed)]
    if args.reference and ranks == 1 and threads == 1 and graph != "comm":
        wargs.append("--reference")
    env = {"GRAPHPAR_NUM_THREADS": str(threads)}
    return run_worker(__file__, ranks, wargs, timeout=args.timeout, env=env)

def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--scale", type=int, default=20)
    p.add_argument("--grid", type=int, default=1000)
    p.add_argument("--runs", type=int, default=5)
    add_driver_options(p, reps=2, timeout=900)
    p.add_argument("--comm-worker", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--graph", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.worker:
        worker(args)
        return
    if args.comm_worker:
        comm_worker(args)
        return
    c = launch("comm", 2, 1, args)
    print(f"2 ranks x 1 thread, one round (header Alltoall + small Alltoallv): "
          f"{c['round_s'] * 1e6:.1f} us; Alltoallv of 8 MiB per rank: "
          f"{c['bytes_per_s'] / 1e9:.2f} GB/s per rank")
    graphs = [f"kron:{args.scale}", f"grid:{args.grid}"]
    for graph in graphs:
        results = run_interleaved(CONFIGS, args.reps,
                                  lambda r, t, g=graph: launch(g, r, t, args))
        base = statistics.median(r["median_s"] for r in results[(1, 1)])
        first = results[(1, 1)][0]
        print(f"\n{graph}: {first['gn']} vertices, {first['gnnz']} stored edges, "
              f"delta {first['delta']:.3g}, {args.runs} sources, median of {args.reps} jobs")
        print(f"{'config':>16} {'time_s':>9} {'vs 1x1':>7} {'cpu_s':>7} {'rounds':>7} "
              f"{'buckets':>8} {'bytes sent per rank':>24} {'gen_s':>7} {'load':>5}  "
              "edges scanned per rank")
        for (ranks, threads), rs in results.items():
            med = statistics.median(r["median_s"] for r in rs)
            per_rank = rs[0]["bytes_per_rank"]
            cpu = statistics.median(r["cpu_s"] for r in rs)
            load = statistics.median(r["load"] for r in rs)
            print(f"{f'{ranks} rank x {threads} thr':>16} {med:9.4f} {base / med:6.2f}x "
                  f"{cpu:7.3f} {rs[0]['rounds']:7d} {rs[0]['buckets']:8d} "
                  f"{'/'.join(str(b) for b in per_rank):>24} "
                  f"{statistics.median(r['gen_s'] for r in rs):7.2f} {load:5.1f}  "
                  f"{'/'.join(str(e) for e in rs[0]['edges_per_rank'])}")
        refs = [r for r in results[(1, 1)] if "scipy_s" in r]
        if refs:
            sc = statistics.median(r["scipy_s"] for r in refs)
            line = f"  reference: scipy dijkstra {sc:.3f} s (1x1 dist is {sc / base:.2f}x scipy)"
            if "shared_memory_s" in refs[0]:
                sm = statistics.median(r["shared_memory_s"] for r in refs)
                line += f"; graphpar.sssp 1 thread {sm:.3f} s"
                line += f"; dist result equals scipy: {refs[0]['same_as_scipy']}"
            print(line)


if __name__ == "__main__":
    main()
