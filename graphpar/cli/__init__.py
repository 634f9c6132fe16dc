"""The ``graphpar`` command-line tool.

Each subcommand lives in one module of this package, holding both its serial
and its MPI path, and provides ``register(subparsers)``, which adds its parser
and sets ``func`` to ``run(args, ctx)``. :func:`main` decides once whether the
process runs under ``mpiexec``; the shared driver (:mod:`graphpar.cli._driver`)
runs the subcommand with that decision in a ``Context``. Bad input, on the
command line or in the data (the user errors,
:data:`graphpar.errors.USER_ERRORS`), is printed as one ``graphpar: error:
...`` line with exit status 2; Ctrl-C as ``graphpar: interrupted`` with status
130; SIGTERM (a batch system's time limit) as ``graphpar: terminated`` with
status 143, after removing any half-written output; under MPI each ends the
whole job, the message printed once.
"""

from __future__ import annotations

import argparse
import importlib
import math
import sys

SUBCOMMANDS = ("demo", "sssp", "generate", "gcn", "cox", "compile")


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

    def parse_known_args(self, args=None, namespace=None):
        """Parse as argparse does; ``option_names`` maps each destination to its flag.

        The innermost (sub)command's parser records it, e.g. ``{"graph_file":
        "GRAPH_FILE", "sources": "--sources", ...}``, so that the driver's
        messages name an argument as it is typed.
        """
        namespace, extras = super().parse_known_args(args, namespace)
        if not hasattr(namespace, "option_names"):
            namespace.option_names = {a.dest: _shown_name(a) for a in self._actions}
        return namespace, extras

    def error(self, message):
        from graphpar.errors import EXIT_USER_ERROR

        print(f"graphpar: error: {message} (see '{self.prog} --help')", file=sys.stderr)
        sys.exit(EXIT_USER_ERROR)


def _shown_name(action) -> str:
    """An argument as the user types it: its long option, else its metavar (``GRAPH_FILE``)."""
    flags = action.option_strings
    if flags:
        return next((f for f in flags if f.startswith("--")), flags[0])
    return action.metavar if isinstance(action.metavar, str) else action.dest.upper()


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


def positive_finite(text: str) -> float:
    """An argparse ``type=``: a positive finite number.

    Examples
    --------
    >>> positive_finite("1e-12")
    1e-12
    >>> positive_finite("0")
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: must be a positive finite number, got '0'
    """
    value = _float(text)
    if not 0 < value < math.inf:
        raise argparse.ArgumentTypeError(f"must be a positive finite number, got {text!r}")
    return value


def nonnegative(text: str) -> float:
    """An argparse ``type=``: a number ``>= 0``, ``inf`` for none.

    Examples
    --------
    >>> nonnegative("inf")
    inf
    >>> nonnegative("-1")
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: must be a number >= 0 (or inf), got '-1'
    """
    value = _float(text)
    if not value >= 0:
        raise argparse.ArgumentTypeError(f"must be a number >= 0 (or inf), got {text!r}")
    return value


def _float(text: str) -> float:
    """``text`` as a float, NaN when it is not a number (which every check above refuses)."""
    try:
        return float(text)
    except ValueError:
        return math.nan


positive_finite.__name__ = nonnegative.__name__ = "number"


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

    This is the one place that decides whether the process is a rank of an
    ``mpiexec`` job (:func:`graphpar.mpi.launched_under_mpi`); the decision
    is passed down to the subcommand in its :class:`~graphpar.cli._driver.Context`.
    A bad command line, ``--help`` and ``--version`` return their status
    instead of raising ``SystemExit``.

    Examples
    --------
    >>> main(["--version"])  # doctest: +SKIP
    graphpar 0.1.0
    0
    """
    from graphpar.cli._driver import (
        Terminated,
        report_interrupt,
        report_terminated,
        run_command,
        sigterm_raises,
    )
    from graphpar.mpi import launched_under_mpi

    under_mpi = launched_under_mpi()
    # SIGTERM raises, so that atomic writes remove their temporary files on the way out
    with sigterm_raises():
        try:
            args = _parse_args(build_parser(), argv, under_mpi)
        except SystemExit as exc:  # usage error (printed as one line), --help, --version
            return exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        except KeyboardInterrupt:  # Ctrl-C while starting up
            return report_interrupt(under_mpi)
        except Terminated:
            return report_terminated(under_mpi)
        return run_command(args, under_mpi)


def _parse_args(parser: argparse.ArgumentParser, argv, under_mpi: bool):
    """Parse; under mpiexec only rank 0 prints usage errors and help (each rank exits alike)."""
    from graphpar.mpi import launcher_rank

    if not under_mpi or launcher_rank() == 0:
        return parser.parse_args(argv)
    import contextlib
    import os

    with open(os.devnull, "w") as null, contextlib.redirect_stderr(null), \
            contextlib.redirect_stdout(null):
        return parser.parse_args(argv)


if __name__ == "__main__":
    sys.exit(main())
