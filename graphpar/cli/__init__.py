"""The ``graphpar`` command-line tool.

Each subcommand lives in its own module of this package and provides
``register(subparsers)``, which adds its parser and sets ``func`` to the
function that runs it. Errors that come from bad input (``ValueError``,
``TypeError``, ``OSError``) are printed as one ``graphpar: error: ...`` line
with exit status 2; under MPI the error ends the whole job.
"""

from __future__ import annotations

import argparse
import importlib
import sys

SUBCOMMANDS = ("demo", "sssp", "generate", "gcn", "cox")


def build_parser() -> argparse.ArgumentParser:
    """Return the argument parser with every subcommand registered.

    Examples
    --------
    >>> build_parser().prog
    'graphpar'
    """
    parser = argparse.ArgumentParser(
        prog="graphpar",
        description=(
            "Parallel graph and survival workloads: delta-stepping shortest paths, "
            "GCN aggregation and training, Cox regression. Run under "
            "'mpiexec -n K graphpar ...' to spread the data across MPI ranks."
        ),
    )
    from graphpar import __version__

    parser.add_argument("--version", action="version", version=f"graphpar {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name in SUBCOMMANDS:
        importlib.import_module(f"graphpar.cli.{name}").register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run the command line; return the exit status.

    Examples
    --------
    >>> main(["--version"])  # doctest: +SKIP
    graphpar 0.1.0
    """
    parser = build_parser()
    args = _parse_args(parser, argv)
    from graphpar.cli._errors import run_reporting_errors

    return run_reporting_errors(args.func, args)


def _parse_args(parser: argparse.ArgumentParser, argv):
    """Parse; under mpiexec only rank 0 prints usage errors and help (each rank exits alike)."""
    from graphpar.mpi import launched_under_mpi, launcher_rank

    if not launched_under_mpi() or launcher_rank() == 0:
        return parser.parse_args(argv)
    import contextlib
    import os

    with open(os.devnull, "w") as null, contextlib.redirect_stderr(null), \
            contextlib.redirect_stdout(null):
        return parser.parse_args(argv)


if __name__ == "__main__":
    sys.exit(main())
