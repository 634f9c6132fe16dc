"""Distributed GCN aggregation: 1 rank x 1 thread, 1 rank x 2 threads, 2 ranks x 1 thread.

Usage::

    python benchmarks/dist_gcn.py [--scale 20] [--edges 8] [--width 64] [--reps 3] [--runs 7]

The driver launches one ``mpiexec`` job per configuration, interleaving the
configurations ``--reps`` times so that background load on a shared machine
hits them alike. Each job generates a uniform random undirected graph with
``2**scale`` vertices and ``edges * 2**scale`` edges in parallel
(:func:`graphpar.mpi.generate.uniform`, block partition: each rank generates
and keeps only its rows), adds self-loops, normalises ``D^-1/2 (A+I) D^-1/2``
(the degrees of remote columns come with one ``Allgatherv``), builds the halo
plan and then times ``--runs`` forward layers (``op @ H``, halo exchange
included) and backward layers (``op.T @ G``; the operator is symmetric, so the
backward reuses the forward exchange) at float32 and the given width, and the
halo exchange alone.
Printed per configuration: the median time per layer over jobs, the speed-up
over 1 x 1, the exchange mode and the bytes each rank sent per layer. The 1 x 1
job also times the serial :func:`graphpar.aggregate` on the same operator.
"""

from __future__ import annotations

import argparse
import statistics
import time

from _mpi import add_driver_options, emit_result, run_interleaved, run_worker

CONFIGS = [(1, 1), (1, 2), (2, 1)]  # (ranks, threads per rank)


def worker(args) -> None:
    import numpy as np
    import scipy.sparse as sp
    from mpi4py import MPI

    from graphpar.mpi import DistOperator
    from graphpar.mpi import generate as dgen
    from graphpar.mpi.comm import get_comm, setup_threads

    comm = get_comm()
    threads = setup_threads(args.threads)
    n = 1 << args.scale
    t0 = time.perf_counter()
    dg = dgen.uniform(n, args.edges * n, seed=args.seed, weights=None, directed=False,
                      comm=comm)
    lo, hi = dg.lo, dg.hi
    local = sp.csr_array((np.ones(dg.lnnz), dg.indices, dg.indptr), shape=(hi - lo, n))
    local = sp.csr_array(local + sp.eye_array(hi - lo, n, k=lo))
    deg = np.asarray(local.sum(axis=1)).ravel()
    counts = np.array(comm.allgather(hi - lo), dtype=np.int64)
    displ = np.concatenate(([0], np.cumsum(counts)[:-1]))
    all_deg = np.empty(n)
    comm.Allgatherv(deg, [all_deg, (counts, displ), MPI.DOUBLE])
    inv = 1.0 / np.sqrt(all_deg)
    rows = np.repeat(np.arange(hi - lo), np.diff(local.indptr))
    local.data = inv[rows + lo] * inv[local.indices]
    op_local = sp.csr_array(local, dtype=np.float32)
    dop = DistOperator.from_local_rows(op_local, dg.partition.offsets, comm, dtype=np.float32,
                                       symmetric=True)  # undirected: op.T == op
    setup_s = comm.allreduce(time.perf_counter() - t0, op=MPI.MAX)
    rng = np.random.default_rng(args.seed + comm.Get_rank())
    w = args.width
    ext = dop.new_ext(w)
    dop.local_rows(ext)[...] = rng.standard_normal((dop.nloc, w), dtype=np.float32)
    out = np.empty((dop.nloc, w), dtype=np.float32)
    G = rng.standard_normal((dop.nloc, w), dtype=np.float32)
    grad = np.empty_like(G)
    ex = dop.exchange(w)

    def timed(fn):
        ts = []
        fn()  # compile, first touch
        for _ in range(args.runs):
            comm.Barrier()
            t = time.perf_counter()
            fn()
            ts.append(comm.allreduce(time.perf_counter() - t, op=MPI.MAX))
        return ts

    def exchange_only():
        ex.begin(ext)
        ex.end()

    xch = timed(exchange_only)
    b0 = ex.bytes_sent
    fwd = timed(lambda: dop.forward_ext(ext, out))
    b1 = ex.bytes_sent
    bwd = timed(lambda: dop.backward(G, grad))
    b2 = ex.bytes_sent
    calls = args.runs + 1
    res = {
        "ranks": comm.Get_size(), "threads": threads, "n": n, "gnnz": dg.gnnz + n,
        "width": w, "setup_s": setup_s, "mode": dop.plan.mode,
        "forward": fwd, "backward": bwd, "exchange_median_s": statistics.median(xch),
        "forward_median_s": statistics.median(fwd), "backward_median_s": statistics.median(bwd),
        "bytes_forward_per_rank": comm.allgather((b1 - b0) // calls),
        "bytes_backward_per_rank": comm.allgather((b2 - b1) // calls),
        "halo_rows_per_rank": comm.allgather(dop.plan.nhalo),
        "interior_rows_per_rank": comm.allgather(dop.n_interior),
    }
    if comm.Get_size() == 1 and args.reference:
        from graphpar import aggregate

        op = sp.csr_array(op_local)
        H = np.ascontiguousarray(dop.local_rows(ext))
        o2 = np.empty_like(H)
        ref = []
        aggregate(op, H, out=o2)
        for _ in range(args.runs):
            t = time.perf_counter()
            aggregate(op, H, out=o2)
            ref.append(time.perf_counter() - t)
        res["serial_aggregate_s"] = statistics.median(ref)
        res["serial_equal"] = bool(np.allclose(o2, out, rtol=1e-5, atol=1e-6))
    if comm.Get_rank() == 0:
        emit_result(res)


def launch(ranks, threads, args) -> dict:
    wargs = ["--worker", "--threads", str(threads), "--scale", str(args.scale), "--edges",
             str(args.edges), "--width", str(args.width), "--runs", str(args.runs), "--seed",
             str(args.seed)]
    if args.reference and ranks == 1:
        wargs.append("--reference")
    env = {"GRAPHPAR_NUM_THREADS": str(threads), "OPENBLAS_NUM_THREADS": "1"}
    return run_worker(__file__, ranks, wargs, timeout=args.timeout, env=env)


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--scale", type=int, default=20)
    p.add_argument("--edges", type=int, default=8, help="undirected edges per vertex")
    p.add_argument("--width", type=int, default=64)
    p.add_argument("--runs", type=int, default=7)
    add_driver_options(p, reps=3, timeout=900)
    args = p.parse_args(argv)
    if args.worker:
        worker(args)
        return
    results = run_interleaved(CONFIGS, args.reps, lambda r, t: launch(r, t, args))
    first = results[(1, 1)][0]
    print(f"uniform graph: {first['n']} vertices, {first['gnnz']} stored entries of A+I, "
          f"width {args.width}, float32; median over {args.reps} jobs of the median of "
          f"{args.runs} layers")
    base_f = statistics.median(r["forward_median_s"] for r in results[(1, 1)])
    base_b = statistics.median(r["backward_median_s"] for r in results[(1, 1)])
    print(f"{'config':>14} {'fwd s/layer':>12} {'vs 1x1':>7} {'bwd s/layer':>12} {'vs 1x1':>7} "
          f"{'mode':>9} {'exchange s':>10} {'fwd bytes sent/rank':>22} {'halo rows/rank':>18}")
    for (ranks, threads), rs in results.items():
        f = statistics.median(r["forward_median_s"] for r in rs)
        b = statistics.median(r["backward_median_s"] for r in rs)
        print(f"{f'{ranks} x {threads} thr':>14} {f:12.4f} {base_f / f:6.2f}x {b:12.4f} "
              f"{base_b / b:6.2f}x {rs[0]['mode']:>9} "
              f"{statistics.median(r['exchange_median_s'] for r in rs):10.4f} "
              f"{'/'.join(str(x) for x in rs[0]['bytes_forward_per_rank']):>22} "
              f"{'/'.join(str(x) for x in rs[0]['halo_rows_per_rank']):>18}")
    refs = [r for r in results[(1, 1)] if "serial_aggregate_s" in r]
    if refs:
        s = statistics.median(r["serial_aggregate_s"] for r in refs)
        print(f"  reference: serial graphpar.aggregate 1 thread {s:.4f} s per layer "
              f"(dist 1x1 forward / serial = {base_f / s:.2f}); results equal: "
              f"{all(r['serial_equal'] for r in refs)}")


if __name__ == "__main__":
    main()
