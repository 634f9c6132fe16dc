"""``graphpar demo``: run every workload on a built-in default and print a short report."""

from __future__ import annotations

import importlib
import time

# Each workload's CLI module provides ``demo(args)``, which runs its part of the
# demo, verifies it against a reference and prints a few lines.
DEMO_STEPS = ("sssp", "gcn", "cox")


def register(sub) -> None:
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
    p.add_argument("--threads", type=int, default=None, help="Numba threads (default: all)")
    p.add_argument("--scale", type=int, default=18, help="Kronecker scale for SSSP (default 18)")
    p.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    p.set_defaults(func=run)


def run(args) -> int:
    from graphpar.threads import set_threads

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
