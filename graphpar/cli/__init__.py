"""The ``graphpar`` command-line tool.

Each subcommand lives in its own module of this package and provides
``register(subparsers)``, which adds its parser and sets ``func`` to the
function that runs it. Bad input, on the command line or in the data (the user
errors, :data:`graphpar.errors.USER_ERRORS`), is printed as one ``graphpar:
error: ...`` line with exit status 2; Ctrl-C as ``graphpar: interrupted`` with
status 130; under MPI either ends the whole job.
"""

from __future__ import annotations

import argparse
import importlib
import sys

SUBCOMMANDS = ("demo", "sssp", "generate", "gcn", "cox")


class Parser(argparse.ArgumentParser):
    """An argument parser that reports a bad command line as one ``graphpar: error:`` line.

    Every subcommand's parser is one too (argparse makes subparsers of the
    parent's class), so a usage error looks like any other error: one line on
    stderr naming the option and the value, exit status 2.

    Examples
    --------
    >>> p = Parser(prog="graphpar demo")
    >>> _ = p.add_argument("--scale", type=int)
    >>> p.parse_args(["--scale", "x"])  # doctest: +SKIP
    graphpar: error: argument --scale: invalid int value: 'x' (see 'graphpar demo --help')
    """

    def error(self, message):
        from graphpar.errors import EXIT_USER_ERROR

        print(f"graphpar: error: {message} (see '{self.prog} --help')", file=sys.stderr)
        sys.exit(EXIT_USER_ERROR)


def int_in(lo: int, hi: int | None = None, *, hint: str = ""):
    """An argparse ``type=``: an integer in ``[lo, hi]`` (no upper bound when ``hi`` is None).

    ``hint`` is added to the message, e.g. how to go beyond ``hi``.

    Examples
    --------
    >>> int_in(1, 40)("18")
    18
    >>> int_in(1, 40)("0")
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: must be an integer in [1, 40], got '0'
    """

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            value = None
        if value is None or value < lo or (hi is not None and value > hi):
            rng = f">= {lo}" if hi is None else f"in [{lo}, {hi}]"
            raise argparse.ArgumentTypeError(
                f"must be an integer {rng}, got {text!r}{hint}"
            )
        return value

    parse.__name__ = "integer"
    return parse


def build_parser() -> argparse.ArgumentParser:
    """Return the argument parser with every subcommand registered.

    Examples
    --------
    >>> build_parser().prog
    'graphpar'
    """
    parser = Parser(
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
    from graphpar.cli._errors import report_interrupt, run_reporting_errors

    try:
        args = _parse_args(build_parser(), argv)
    except KeyboardInterrupt:  # Ctrl-C while starting up
        return report_interrupt()
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
