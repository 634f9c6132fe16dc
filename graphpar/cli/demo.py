"""``graphpar demo``: run every workload on a built-in default and print a short report.

Serial only: under ``mpiexec`` with more than one rank it refuses (every rank
would run and print the whole demo).
"""

from __future__ import annotations

import importlib
import time

# Each workload's CLI module provides ``demo(args)``, which runs its part of the
# demo, verifies it against a reference and prints a few lines.
DEMO_STEPS = ("sssp", "gcn", "cox")

NOT_UNDER_MPI = (
    "graphpar demo does not run under mpiexec (every rank would run the whole demo); "
    "run it without mpiexec, or run 'mpiexec -n K graphpar sssp|gcn|cox ...'"
)


def register(sub) -> None:
    """Add the ``demo`` subcommand to ``sub``."""
    from graphpar.cli import int_in
    from graphpar.cli._driver import add_shared_options
    from graphpar.limits import MAX_SCALE

    p = sub.add_parser(
        "demo",
        help="run every workload on built-in data, verify it and print a report",
        description=(
            "Generate a Kronecker graph (scale 18) and run delta-stepping SSSP from a few "
            "sources, verified against Dijkstra; train a GCN on Cora (from GRAPHPAR_DATA) "
            "or, without it, on a generated stochastic-block-model graph; fit a Cox model "
            "to generated data with known coefficients. Runs serially only, not under "
            "mpiexec."
        ),
    )
    add_shared_options(p, seed=True, json=True)
    p.add_argument("--scale", type=int_in(1, MAX_SCALE), default=18,
                   help=f"Kronecker scale for SSSP, 1 to {MAX_SCALE} (default 18)")
    p.set_defaults(func=run)


def _check_size(scale: int) -> None:
    """Refuse, before any step runs, a ``--scale`` whose graph would not fit in memory."""
    from graphpar.generate import generation_bytes
    from graphpar.limits import check_memory

    n, m = 1 << scale, 16 << scale
    check_memory(generation_bytes(n, m, False) + 32 * n,
                 what=f"--scale {scale} (a Kronecker graph of {n} vertices, {m} edges)")


def run(args, ctx) -> int:
    """Run ``graphpar demo`` in the context ``ctx``; return the exit status (1: a check failed)."""
    import contextlib
    import io

    ctx.refuse_mpi(NOT_UNDER_MPI)
    _check_size(args.scale)
    # with --json the steps' text goes nowhere and one JSON object sums them up
    quiet = contextlib.redirect_stdout(io.StringIO()) if ctx.as_json else contextlib.nullcontext()
    checks = {}
    t0 = time.perf_counter()
    with quiet:
        print(f"graphpar demo ({ctx.threads} threads)")
        for name in DEMO_STEPS:
            module = importlib.import_module(f"graphpar.cli.{name}")
            print()
            checks[name] = bool(module.demo(args))
        print()
    seconds = time.perf_counter() - t0
    failed = sum(not ok for ok in checks.values())
    status = "all checks passed" if failed == 0 else f"{failed} check(s) FAILED"
    fields = {"checks": checks, "passed": failed == 0, "seconds": seconds,
              "threads": ctx.threads, "scale": args.scale, "seed": args.seed}
    ctx.report(fields, lambda f: print(f"demo finished in {seconds:.1f} s: {status}"))
    return 0 if failed == 0 else 1
