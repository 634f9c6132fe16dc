"""Benchmark: GCN aggregation ``op @ H``, graphpar against scipy (and torch.sparse.mm with CSR).

Run: ``python benchmarks/aggregate.py`` (about 10 minutes on 2 cores; ``--quick`` for a
small smoke run). Everything is measured in one process: a STREAM triad (Numba,
parallel) for the machine's bandwidth, then for each graph, width, dtype and thread
count the median of ``--repeat`` calls of graphpar's :func:`graphpar.aggregate`,
scipy's ``op @ H`` (single-threaded; timed once per case) and, when torch is
importable, ``torch.sparse.mm`` on a CSR tensor. Finally Cora's ms per training
epoch when ``GRAPHPAR_DATA`` holds it.

Traffic model (bytes per aggregation, m rows, nnz stored entries, width w, s bytes per
value, i bytes per index): ``nnz*(i + s)`` for the operator's indices and values,
``nnz*w*s`` for the rows of H it gathers (every gathered row counted, no cache reuse),
``m*w*s`` for writing the output and ``8*(m+1)`` for indptr. GFLOP/s counts 2*nnz*w.
The triad ``a = b + x*c`` counts 3 arrays of 8-byte values (STREAM's convention).

``--locality`` runs only the locality study (f = 64, float32, all threads; triad and every
variant timed in turns, medians): the kernel on numpy's H (16 bytes past a cache line, so
a 256-byte row spans 5 lines), the baseline of the ratios, :func:`graphpar.aggregate` into
a given line-aligned ``out`` and allocating its own result, with :func:`graphpar.reorder`
(``rcm``, ``degree``; H and the result permuted on every call), the kernel on the
reordered operator with H kept in the new order (a training loop's use), scipy, and a
ceiling: the same gathers of rows of H alone (same order, prefetch and chunks; no values,
no arithmetic per entry, no output rows), whose "%triad" (under the aggregation's traffic
model) is as far as the kernel could go without reusing rows from cache. "%triad" is each
turn's model GB/s over the triad of the same turn, median over turns (on a shared host the
bandwidth changes between turns); "vs kernel" is the median of the per-turn time ratios to
the kernel on numpy's H. (The kernel before the tail-line prefetch, against which
docs/performance.md quotes its gain, was timed from a copy this script carried until that
figure was taken.) The model's GB/s counts every gathered row as moved, so a reordering
whose gathers hit cache shows more GB/s than the memory moved: read the time ratios too.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from functools import partial
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _timing import fmt_ratio, median_time  # noqa: E402
from numba import njit, prange  # noqa: E402

import graphpar  # noqa: E402
from graphpar import aggregate, gcn_normalize  # noqa: E402
from graphpar.generate import kronecker, uniform  # noqa: E402
from graphpar.kernels.aggregate import NCHUNKS, chunk_bounds  # noqa: E402
from graphpar.kernels.atomics import fetch_add  # noqa: E402
from graphpar.kernels.prefetch import prefetch_row  # noqa: E402
from graphpar.threads import max_threads, set_threads  # noqa: E402


@njit(parallel=True, cache=True)
def _triad(a, b, c, x):
    for i in prange(a.size):
        a[i] = b[i] + x * c[i]


def triad_gbs(n: int, repeat: int) -> float:
    """STREAM triad bandwidth in GB/s with the current thread count."""
    a = np.zeros(n)
    b = np.ones(n)
    c = np.full(n, 2.0)
    med, _ = median_time(lambda: _triad(a, b, c, 3.0), repeat=repeat)
    return 3 * 8 * n / med / 1e9


@njit(parallel=True, cache=True)
def gather_only(indptr, indices, H, acc):
    """Sum the rows of ``H`` that ``A @ H`` gathers, in its order, with its prefetch and
    chunks (taken from a shared counter), into ``acc[t]`` per worker ``t``: the gathers
    without the arithmetic per entry, the operator's values or the output rows (a ceiling
    for the kernel at widths of at most one tile)."""
    m = indptr.size - 1
    nchunks = min(m, NCHUNKS)
    k = H.shape[1]
    bounds = chunk_bounds(indptr, nchunks)
    span = min(k, 4 * max(1, 64 // H.itemsize))
    taken = np.zeros(1, dtype=np.int64)
    for t in prange(acc.shape[0]):
        a = acc[t]
        c = fetch_add(taken, 0, 1)
        while c < nchunks:
            start = indptr[bounds[c]]
            end = indptr[bounds[c + 1]]
            for j in range(start, min(start + 16, end)):
                prefetch_row(H, indices[j], span)
            for j in range(start, end):
                if j + 16 < end:
                    prefetch_row(H, indices[j + 16], span)
                h = H[indices[j]]
                for f in range(k):
                    a[f] += h[f]
            c = fetch_add(taken, 0, 1)


def traffic(op, w: int, s: int) -> float:
    m = op.shape[0]
    i = op.indices.itemsize
    return op.nnz * (i + s) + op.nnz * w * s + m * w * s + 8 * (m + 1)


def locality(graphs: dict, repeat: int) -> None:
    """The locality study of ``--locality`` (see the module docstring)."""
    from graphpar._gcn import empty_lines, line_aligned
    from graphpar.kernels.aggregate import spmm

    w, dt = 64, np.dtype(np.float32)
    set_threads(max_threads())
    print(f"\nlocality study: f = {w}, {dt}, {max_threads()} threads, {repeat} turns (triad "
          "and every variant timed once per turn); wall time, and CPU time of all threads")
    for gname, g in graphs.items():
        op = gcn_normalize(g, dtype=dt)
        n = op.shape[0]
        H = np.random.default_rng(0).standard_normal((n, w)).astype(dt)
        print(f"\n{gname}: {n} vertices, {op.nnz} stored entries; numpy's H starts "
              f"{H.ctypes.data % 64} bytes into a cache line")
        out = np.empty_like(H)
        out_lines = empty_lines(H.shape, dt)
        baseline = "kernel, numpy's H"
        cases = {
            baseline: (spmm, op.indptr, op.indices, op.data, H, out),
            "aggregate, out on lines": (partial(aggregate, out=out_lines), op, H),
            "aggregate (allocates)": (aggregate, op, H),
        }
        for method in ("rcm", "degree"):
            t0, c0 = time.perf_counter(), time.process_time()
            rop = graphpar.reorder(op, method=method)
            cost = (time.perf_counter() - t0, time.process_time() - c0)
            extra = (rop.op.data.nbytes + rop.op.indices.nbytes + rop.op.indptr.nbytes
                     + rop.perm.nbytes + rop.inverse.nbytes)
            print(f"reorder({method!r}): {cost[0]:.2f} s wall, {cost[1]:.2f} s CPU; keeps "
                  f"{extra / 2**20:.0f} MiB (the operator: "
                  f"{(op.data.nbytes + op.indices.nbytes + op.indptr.nbytes) / 2**20:.0f} MiB)")
            hp = line_aligned(np.ascontiguousarray(H[rop.perm]))
            cases[f"aggregate(reorder {method})"] = (partial(aggregate, out=out), rop, H)
            cases[f"kernel, {method} order kept"] = (
                spmm, rop.op.indptr, rop.op.indices, rop.op.data, hp, out_lines)
        cases["scipy op @ H"] = (op.__matmul__, H)
        acc = np.zeros((max_threads(), w), dtype=dt)
        cases["ceiling: the gathers alone"] = (gather_only, op.indptr, op.indices, H, acc)
        for fn, *fargs in cases.values():
            fn(*fargs)  # compile and warm up
        times = {name: [] for name in cases}
        cpu = {name: [] for name in cases}
        tri = []
        for _ in range(repeat):
            tri.append(triad_gbs(1 << 25, 1))
            for name, (fn, *fargs) in cases.items():
                t0, c0 = time.perf_counter(), time.process_time()
                fn(*fargs)
                times[name].append(time.perf_counter() - t0)
                cpu[name].append(time.process_time() - c0)
        tri = np.array(tri)
        model = traffic(op, w, dt.itemsize)
        base, cbase = np.array(times[baseline]), np.array(cpu[baseline])
        sp_t = np.array(times["scipy op @ H"])
        print(f"STREAM triad median {np.median(tri):.1f} GB/s (turns: "
              f"{', '.join(f'{x:.1f}' for x in tri)})")
        print(f"{'variant':<30} {'ms':>8} {'model GB/s':>10} {'%triad':>7} {'vs kernel':>10} "
              f"{'vs scipy':>9} {'CPU ms':>8} {'CPU vs kernel':>14}")
        for name, ts in times.items():
            ts, cs = np.array(ts), np.array(cpu[name])
            med = float(np.median(ts))
            pct = float(np.median(100 * model / ts / 1e9 / tri))
            print(f"{name:<30} {med * 1e3:>8.1f} {model / med / 1e9:>10.1f} {pct:>6.0f}% "
                  f"{np.median(base / ts):>9.2f}x {np.median(sp_t / ts):>8.2f}x "
                  f"{np.median(cs) * 1e3:>8.1f} {np.median(cbase / cs):>13.2f}x", flush=True)
        cases.clear()


def torch_mm():
    try:
        import torch
    except ImportError:
        return None
    return torch


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="small graphs, for a smoke run")
    ap.add_argument("--widths", default="16,64,256")
    ap.add_argument("--dtypes", default="float32,float64")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--graphs", default="uniform,kronecker")
    ap.add_argument("--locality", action="store_true",
                    help="only the alignment and reordering study at f = 64, float32")
    args = ap.parse_args(argv)
    widths = [int(w) for w in args.widths.split(",")]
    dtypes = [np.dtype(d) for d in args.dtypes.split(",")]
    threads = sorted({1, min(2, max_threads())})
    scale = 14 if args.quick else 20
    torch = torch_mm()

    print(f"graphpar {graphpar.__version__}, numpy {np.__version__}, "
          f"scipy {__import__('scipy').__version__}, threads {threads}, "
          f"torch {torch.__version__ if torch else 'not installed'}")
    print(f"median of {args.repeat} runs after one warm-up; scipy is single-threaded and "
          "timed once per case")
    triad = {}
    for t in threads:
        set_threads(t)
        triad[t] = triad_gbs((1 << 25) if not args.quick else (1 << 20), args.repeat)
        print(f"STREAM triad ({t} thread{'s' if t > 1 else ''}): {triad[t]:.1f} GB/s")

    graphs = {}
    t0 = time.perf_counter()
    if "uniform" in args.graphs:
        # 2**scale vertices, 2**(scale+3) undirected edges: about 2**(scale+4) stored
        graphs["uniform"] = uniform(1 << scale, 1 << (scale + 3), seed=1, weights=None,
                                    directed=False)
    if "kronecker" in args.graphs:
        graphs["kronecker"] = kronecker(scale, 8, seed=1, weights=None)
    print(f"generated graphs in {time.perf_counter() - t0:.1f} s")
    if args.locality:
        locality(graphs, args.repeat)
        return 0

    header = (f"{'graph':<10} {'dtype':<8} {'w':>4} {'thr':>3} {'graphpar ms':>11} "
              f"{'scipy ms':>9} {'speedup':>8} {'GFLOP/s':>8} {'GB/s':>6} {'%triad':>7}"
              + (f" {'torch ms':>9}" if torch else ""))
    for gname, g in graphs.items():
        for dt in dtypes:
            op = gcn_normalize(g, dtype=dt)
            print(f"\n{gname}: {op.shape[0]} vertices, {op.nnz} stored entries "
                  f"(with self-loops), {dt}, indices {op.indices.dtype}")
            print(header)
            rng = np.random.default_rng(0)
            for w in widths:
                H = rng.standard_normal((op.shape[0], w)).astype(dt)
                out = np.empty_like(H)
                set_threads(max(threads))
                aggregate(op, H, out=out)
                ref = op @ H
                err = np.abs(out - ref).max() / max(np.abs(ref).max(), 1e-300)
                sp_med, _ = median_time(lambda op=op, H=H: op @ H, repeat=args.repeat)
                del ref
                tt = None
                if torch:
                    T = torch.sparse_csr_tensor(
                        torch.from_numpy(op.indptr.astype(np.int64)),
                        torch.from_numpy(op.indices.astype(np.int64)),
                        torch.from_numpy(op.data), size=op.shape)
                    Ht = torch.from_numpy(H)
                for t in threads:
                    set_threads(t)
                    med, _ = median_time(lambda op=op, H=H, out=out: aggregate(op, H, out=out),
                                         repeat=args.repeat)
                    if torch:
                        torch.set_num_threads(t)
                        tt, _ = median_time(lambda T=T, Ht=Ht: torch.sparse.mm(T, Ht),
                                            repeat=args.repeat)
                    gflops = 2 * op.nnz * w / med / 1e9
                    gbs = traffic(op, w, dt.itemsize) / med / 1e9
                    line = (f"{gname:<10} {dt.name:<8} {w:>4} {t:>3} {med * 1e3:>11.1f} "
                            f"{sp_med * 1e3:>9.1f} {fmt_ratio(sp_med, med):>8} {gflops:>8.2f} "
                            f"{gbs:>6.1f} {100 * gbs / triad[t]:>6.0f}%")
                    if torch:
                        line += f" {tt * 1e3:>9.1f}"
                    print(line, flush=True)
                print(f"{'':<10} max relative difference to scipy at w={w}: {err:.1e}")
                del H, out

    root = os.environ.get("GRAPHPAR_DATA")
    if root:
        from graphpar import train_gcn
        from graphpar.datasets import load_planetoid

        try:
            data = load_planetoid("cora", root, download=False)
        except FileNotFoundError as exc:
            print(f"\nCora: skipped ({exc})")
            return 0
        print()
        for t in threads:
            set_threads(t)
            train_gcn(data, epochs=5)  # compile and warm up
            runs = [train_gcn(data, seed=s) for s in range(3)]
            ms = sorted(1e3 * r.seconds / r.epochs for r in runs)
            print(f"Cora GCN training ({t} thread{'s' if t > 1 else ''}): median "
                  f"{ms[1]:.2f} ms/epoch over 3 runs of 200 epochs "
                  f"({', '.join(f'{x:.2f}' for x in ms)}); test accuracy "
                  f"{', '.join(f'{r.test_accuracy:.3f}' for r in runs)}")
    else:
        print("\nCora: skipped (set GRAPHPAR_DATA)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
