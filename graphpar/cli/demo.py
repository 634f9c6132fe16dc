"""``graphpar demo``: run every workload on a built-in default and print a short report."""

from __future__ import annotations

import importlib
import time

# Each workload's CLI module provides ``demo(args)``, which runs its part of the
# demo, verifies it against a reference and prints a few lines.
DEMO_STEPS = ("sssp", "gcn", "cox")


def register(sub) -> None:
    from graphpar.cli import int_in
    from graphpar.generate import MAX_SCALE

    p = sub.add_parser(
        "demo",
        help="run every workload on built-in data, verify it and print a report",
        description=(
            "Generate a Kronecker graph (scale 18) and run delta-stepping SSSP from a few "
            "sources, verified against Dijkstra; train a GCN on Cora (from GRAPHPAR_DATA) "
            "or, without it, on a generated stochastic-block-model graph; fit a Cox model "
            "to generated data with known coefficients."
        ),
    )
    p.add_argument("--threads", type=int_in(1), default=None,
                   help="Numba threads (default: all)")
    p.add_argument("--scale", type=int_in(1, MAX_SCALE), default=18,
                   help=f"Kronecker scale for SSSP, 1 to {MAX_SCALE} (default 18)")
    p.add_argument("--seed", type=int_in(0, 2**64 - 1), default=0,
                   help="random seed (default 0)")
    p.set_defaults(func=run)


def _check_size(scale: int) -> None:
    """Refuse, before any step runs, a ``--scale`` whose graph would not fit in memory."""
    from graphpar.generate import generation_bytes
    from graphpar.limits import check_memory

    n, m = 1 << scale, 16 << scale
    check_memory(generation_bytes(n, m, False) + 32 * n,
                 what=f"--scale {scale} (a Kronecker graph of {n} vertices, {m} edges)")


def run(args) -> int:
    from graphpar.threads import set_threads

    _check_size(args.scale)
    threads = set_threads(args.threads)
    print(f"graphpar demo ({threads} threads)")
    t0 = time.perf_counter()
    failed = 0
    for name in DEMO_STEPS:
        module = importlib.import_module(f"graphpar.cli.{name}")
        print()
        failed += 0 if module.demo(args) else 1
    print()
    status = "all checks passed" if failed == 0 else f"{failed} check(s) FAILED"
    print(f"demo finished in {time.perf_counter() - t0:.1f} s: {status}")
    return 0 if failed == 0 else 1
