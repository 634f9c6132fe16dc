"""Distributed Cox fit: 1 rank x 1 thread, 1 rank x 2 threads, 2 ranks x 1 thread.

Usage::

    python benchmarks/dist_cox.py [--n 10000000] [--p 10] [--reps 2]

The driver launches one ``mpiexec`` job per configuration, interleaving the
configurations ``--reps`` times so that background load on a shared machine
hits them alike. Each job generates its share of the same synthetic data
(blocks of 2**20 rows, each from its own seed, so the data do not depend on
the number of ranks: ``p`` standard normal covariates, exponential times
with known coefficients, 30% censored, about 5% of rows rounded into tie
groups) and fits the model with :class:`graphpar.mpi.CoxPH`, which sorts and
splits the rows across the ranks in time order
(:func:`graphpar.mpi.distribute_cox`) and runs the serial estimator's Newton
loop on distributed evaluations. Printed per configuration: the
median time per Newton iteration (one likelihood, gradient and Hessian
evaluation, scans and reductions included), the speed-up over 1 x 1, the whole
fit, the setup (sort and split), and the bytes each rank sent per iteration.
The 1 x 1 job also fits the serial :class:`graphpar.CoxPH` on the same data
and reports the largest relative difference of the coefficients.
"""

from __future__ import annotations

import argparse
import statistics
import time

from _mpi import add_driver_options, emit_result, run_interleaved, run_worker

CONFIGS = [(1, 1), (1, 2), (2, 1)]  # (ranks, threads per rank)
BLOCK = 1 << 20


def make_rows(n: int, p: int, seed: int, lo: int, hi: int):
    """Rows ``lo:hi`` of the synthetic data set (``lo``, ``hi`` multiples of BLOCK or n)."""
    import numpy as np

    beta = np.linspace(-0.5, 0.5, p)
    parts = []
    for b in range(lo // BLOCK, (hi + BLOCK - 1) // BLOCK):
        rng = np.random.default_rng([seed, b])
        m = min(BLOCK, n - b * BLOCK)
        X = rng.standard_normal((m, p))
        t = rng.exponential(np.exp(-(X @ beta)))
        c = rng.exponential(2.0, m)
        e = t <= c
        t = np.minimum(t, c)
        tie = rng.random(m) < 0.05
        t[tie] = np.round(t[tie], 2)
        parts.append((X, t, e))
    X = np.concatenate([q[0] for q in parts]) if parts else np.zeros((0, p))
    t = np.concatenate([q[1] for q in parts]) if parts else np.zeros(0)
    e = np.concatenate([q[2] for q in parts]) if parts else np.zeros(0, bool)
    return X, t, e


def worker(args) -> None:
    import numpy as np
    from mpi4py import MPI

    from graphpar.mpi import CoxPH
    from graphpar.mpi.comm import get_comm, setup_threads

    comm = get_comm()
    threads = setup_threads(args.threads)
    rank, size = comm.Get_rank(), comm.Get_size()
    nblocks = (args.n + BLOCK - 1) // BLOCK
    b0, b1 = nblocks * rank // size, nblocks * (rank + 1) // size
    lo, hi = b0 * BLOCK, min(b1 * BLOCK, args.n)
    t0 = time.perf_counter()
    X, t, e = make_rows(args.n, args.p, args.seed, lo, hi)
    gen_s = comm.allreduce(time.perf_counter() - t0, op=MPI.MAX)
    warm = slice(0, min(X.shape[0], 2000))
    CoxPH(comm=comm).fit(X[warm], t[warm], e[warm])  # compile
    comm.Barrier()
    t0 = time.perf_counter()
    model = CoxPH(comm=comm).fit(X, t, e)
    total_s = comm.allreduce(time.perf_counter() - t0, op=MPI.MAX)
    del X, t, e
    stats = model.mpi_stats_
    evals = list(stats.evaluation_seconds)
    res = {
        "ranks": size, "threads": threads, "n": args.n, "p": args.p, "gen_s": gen_s,
        "setup_s": stats.distribute_seconds, "fit_s": total_s - stats.distribute_seconds,
        "n_iter": model.n_iter_, "evals": evals,
        "iter_median_s": stats.seconds_per_evaluation,
        "rows_per_rank": list(stats.rows_per_rank),
        "bytes_per_iter_per_rank": [b // max(stats.evaluations, 1)
                                    for b in stats.bytes_sent_per_rank],
        "coef": model.coef_.tolist(), "converged": bool(model.converged_),
    }
    if size == 1 and args.reference:
        import graphpar

        X, t, e = make_rows(args.n, args.p, args.seed, 0, args.n)
        t0 = time.perf_counter()
        ref = graphpar.CoxPH().fit(X, t, e)
        res["serial_fit_s"] = time.perf_counter() - t0
        res["serial_n_iter"] = ref.n_iter_
        res["max_rel_coef_diff"] = float(np.max(np.abs(model.coef_ - ref.coef_)
                                                / np.abs(ref.coef_)))
    if rank == 0:
        emit_result(res)


def launch(ranks, threads, args) -> dict:
    wargs = ["--worker", "--threads", str(threads), "--n", str(args.n), "--p", str(args.p),
             "--seed", str(args.seed)]
    if args.reference and ranks == 1 and threads == 1:
        wargs.append("--reference")
    env = {"GRAPHPAR_NUM_THREADS": str(threads), "OPENBLAS_NUM_THREADS": "1"}
    return run_worker(__file__, ranks, wargs, timeout=args.timeout, env=env)


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--n", type=int, default=10_000_000)
    p.add_argument("--p", type=int, default=10)
    add_driver_options(p, reps=2, timeout=1800)
    args = p.parse_args(argv)
    if args.worker:
        worker(args)
        return
    results = run_interleaved(CONFIGS, args.reps, lambda r, t: launch(r, t, args))
    first = results[(1, 1)][0]
    print(f"Cox, Efron ties: N = {first['n']}, p = {first['p']}, {first['n_iter']} Newton "
          f"iterations; median over {args.reps} jobs")
    base = statistics.median(r["iter_median_s"] for r in results[(1, 1)])
    base_fit = statistics.median(r["fit_s"] for r in results[(1, 1)])
    print(f"{'config':>14} {'s/iteration':>12} {'vs 1x1':>7} {'fit s':>8} {'vs 1x1':>7} "
          f"{'setup s':>8} {'bytes/iter/rank':>18} {'rows/rank':>20}")
    for (ranks, threads), rs in results.items():
        it = statistics.median(r["iter_median_s"] for r in rs)
        fit = statistics.median(r["fit_s"] for r in rs)
        setup = statistics.median(r["setup_s"] for r in rs)
        print(f"{f'{ranks} x {threads} thr':>14} {it:12.4f} {base / it:6.2f}x {fit:8.3f} "
              f"{base_fit / fit:6.2f}x {setup:8.2f} "
              f"{'/'.join(str(b) for b in rs[0]['bytes_per_iter_per_rank']):>18} "
              f"{'/'.join(str(b) for b in rs[0]['rows_per_rank']):>20}")
    refs = [r for r in results[(1, 1)] if "serial_fit_s" in r]
    if refs:
        s = statistics.median(r["serial_fit_s"] for r in refs)
        print(f"  reference: serial graphpar.CoxPH 1 thread fit {s:.3f} s "
              f"({refs[0]['serial_n_iter']} iterations); largest relative coefficient "
              f"difference from the distributed fits: "
              f"{max(r['max_rel_coef_diff'] for r in refs):.2e}")
    coefs = [r["coef"] for rs in results.values() for r in rs]
    import numpy as np

    c = np.array(coefs)
    print(f"  coefficients across all jobs agree to {np.max(np.abs(c - c[0]) / np.abs(c[0])):.2e}"
          " relative")


if __name__ == "__main__":
    main()
