"""The one driver under every ``graphpar`` subcommand: run context, shared options, errors.

:func:`graphpar.cli.main` decides once whether the process was started by
``mpiexec`` and hands the decision to :func:`run_command`, which builds a
:class:`Context` (the communicator or None, this rank, the threads in force,
``--json``) and calls the subcommand's ``run(args, ctx)``. A subcommand module
holds its serial and its MPI path side by side and goes through the context
for everything that differs between them: stages that may fail on one rank
(:meth:`Context.collectively`), timing (:meth:`Context.timed`), printing
(rank 0 alone: :meth:`Context.print`, :meth:`Context.report`), progress
(rank 0 alone, off with ``--quiet``: :meth:`Context.progress`) and writing
output (rank 0 alone, atomically: :meth:`Context.write`). When a run has to
compile kernels (a cold cache), rank 0 says so once on stderr.

Errors: a user error (:data:`graphpar.errors.USER_ERRORS`) is printed as one
``graphpar: error: ...`` line (:func:`graphpar.errors.error_message`) with
exit status 2; Ctrl-C as ``graphpar: interrupted`` with status 130; SIGTERM
(what Slurm and PBS send at the time limit, and ``kill``'s default) as
``graphpar: terminated`` with status 143, after the ``with`` blocks on the way
out have run (:func:`graphpar.io.atomic_write` removes its temporary file:
a terminated job leaves no half-written output). Under
``mpiexec`` an error must end the whole job, never leave the other ranks
waiting in a collective: an error that every rank raised alike (a stage run
through :func:`graphpar.mpi.comm.run_collectively`) is printed by rank 0 alone
and every rank exits 2; a user error on some ranks only prints its message
once and aborts the job (``MPI_Abort``, status 2); Ctrl-C prints ``graphpar:
interrupted`` once and aborts with status 130, SIGTERM ``graphpar:
terminated`` with status 143; anything else is a bug, printed with its
traceback (status 1). A warning is printed as one ``graphpar: warning: ...``
line by the rank that warns (with ``--quiet`` too: it is about the data, not
progress), and an output that would overwrite one of the run's inputs, or
whose name says another format than the one written there (a ``--plot`` not
named ``.png``), is refused before any work (:func:`check_output_paths`).
"""

from __future__ import annotations

import contextlib
import json
import math
import signal
import sys
import time
from dataclasses import dataclass
from typing import Any

from graphpar.errors import EXIT_INTERRUPTED, EXIT_USER_ERROR, USER_ERRORS, error_message

__all__ = [
    "Context", "add_shared_options", "print_report", "run_command", "report_interrupt",
    "SHARED_HELP", "INTERRUPTED", "TERMINATED", "EXIT_TERMINATED", "Terminated",
    "sigterm_raises", "report_terminated",
]

INTERRUPTED = "graphpar: interrupted"
TERMINATED = "graphpar: terminated"
EXIT_TERMINATED = 128 + signal.SIGTERM  # 143, as a shell reports a process SIGTERM ended


class Terminated(BaseException):
    """SIGTERM, raised where the process was (:func:`sigterm_raises`).

    A ``BaseException`` like ``KeyboardInterrupt``, so that no ``except
    Exception`` swallows it, while every ``with`` block and ``finally`` on the
    way out runs: :func:`graphpar.io.atomic_write` removes its temporary file.
    """


@contextlib.contextmanager
def sigterm_raises():
    """Within the block, SIGTERM raises :class:`Terminated` instead of ending the process.

    A batch system ends a job at its time limit with SIGTERM (Slurm, then
    SIGKILL after ``KillWait``; PBS likewise); Python's default for it is to
    die at once, leaving any temporary file behind. The first SIGTERM raises;
    further ones are ignored, so that the clean-up is not itself cut short.
    Outside the main thread (where signals cannot be handled) it does nothing.

    Examples
    --------
    >>> import os, signal
    >>> with sigterm_raises():
    ...     try:
    ...         os.kill(os.getpid(), signal.SIGTERM)
    ...     except Terminated:
    ...         print("cleaned up")
    cleaned up
    """
    def handler(signum, frame):
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        raise Terminated

    try:
        previous = signal.signal(signal.SIGTERM, handler)
    except ValueError:  # not the main thread
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)

# The shared options: one spelling, one type and one help text for every subcommand.
SHARED_HELP = {
    "threads": "Numba threads per process (default: $GRAPHPAR_NUM_THREADS, else "
               "$SLURM_CPUS_PER_TASK, else PBS's $OMP_NUM_THREADS or $NCPUS, else all; "
               "under mpiexec, the node's cores / its ranks; see docs/cluster.md)",
    "seed": "random seed, 0 to 2**64-1 (default 0)",
    "json": "print one JSON object instead of the text report",
    "output": "write {what} to FILE",
    "plot": "draw {what} (PNG: a name not ending in .png is refused; needs matplotlib, "
            "pip install graphpar[plot])",
    "quiet": "no progress reports and no compile notice on stderr (errors and warnings "
             "are still printed)",
}


def add_shared_options(parser, *, threads: bool = True, seed: bool = False,
                       json: bool = False, output: str | None = None,
                       output_required: bool = False, output_metavar: str = "FILE",
                       plot: str | None = None) -> None:
    """Add the shared options a subcommand has to its parser.

    Every subcommand that has ``--plot``, ``--threads``, ``--seed``, ``--json`` or
    ``-o/--output`` gets it from here, so that the option means the same
    everywhere: ``--plot FILE.png`` a PNG picture (``plot`` says what is drawn;
    :func:`check_output_paths` refuses another name and a missing matplotlib),
    ``--threads`` an integer >= 1, ``--seed`` an integer in
    ``[0, 2**64 - 1]`` (default 0), ``--json`` one JSON object on stdout,
    ``--output`` the file the result is written to; ``output`` says what is
    written there. ``--quiet`` (no progress reports, no compile notice) is
    given to every subcommand.

    Examples
    --------
    >>> from graphpar.cli import Parser
    >>> p = Parser(prog="graphpar x")
    >>> add_shared_options(p, seed=True, json=True)
    >>> a = p.parse_args(["--seed", "3", "--json"])
    >>> a.threads, a.seed, a.json, a.quiet
    (None, 3, True, False)
    """
    from graphpar.cli import int_in

    if plot is not None:
        parser.add_argument("--plot", metavar="FILE.png",
                            help=SHARED_HELP["plot"].format(what=plot))
    parser.add_argument("-q", "--quiet", action="store_true", help=SHARED_HELP["quiet"])

    if threads:
        parser.add_argument("--threads", type=int_in(1), default=None, metavar="N",
                            help=SHARED_HELP["threads"])
    if seed:
        parser.add_argument("--seed", type=int_in(0, 2**64 - 1), default=0,
                            help=SHARED_HELP["seed"])
    if json:
        parser.add_argument("--json", action="store_true", help=SHARED_HELP["json"])
    if output is not None:
        parser.add_argument("-o", "--output", metavar=output_metavar,
                            required=output_required,
                            help=SHARED_HELP["output"].format(what=output).replace(
                                "FILE", output_metavar))


@dataclass(frozen=True)
class Context:
    """How this run of a subcommand runs: serially or on one rank of an MPI job.

    Built once per run by :func:`run_command` from the decision
    :func:`graphpar.cli.main` made; a subcommand never looks at the
    environment again.

    Attributes
    ----------
    comm : mpi4py.MPI.Comm or None
        The job's communicator (:func:`graphpar.mpi.comm.get_comm`), None in a
        serial run.
    rank, size : int
        This rank and the number of ranks (0 and 1 serially).
    threads : int
        The Numba threads in force on this process.
    as_json : bool
        ``--json``: the report is one JSON object.
    no_progress : bool
        ``--quiet``: no progress reports and no compile notice.

    Examples
    --------
    >>> ctx = Context(threads=2)
    >>> ctx.mpi, ctx.is_root, ctx.quiet, ctx.shows_progress
    (False, True, False, True)
    >>> ctx.collectively(lambda: 6 * 7)
    42
    >>> with Context(no_progress=True).progress(3, "steps") as bar:
    ...     bar.update(3)
    """

    comm: Any = None
    rank: int = 0
    size: int = 1
    threads: int = 1
    as_json: bool = False
    no_progress: bool = False

    @property
    def mpi(self) -> bool:
        """True on a rank of an MPI job (also ``mpiexec -n 1``)."""
        return self.comm is not None

    @property
    def is_root(self) -> bool:
        """True on the process that prints and writes: rank 0, or the serial process."""
        return self.rank == 0

    @property
    def quiet(self) -> bool:
        """True on the ranks that print nothing (all but rank 0)."""
        return self.rank != 0

    @property
    def shows_progress(self) -> bool:
        """True when this process reports progress: rank 0, without ``--quiet``."""
        return self.is_root and not self.no_progress

    def progress(self, total: float | None, desc: str, *, unit: str = "it"):
        """A :func:`graphpar.progress.progress` report, on only when :attr:`shows_progress`.

        Pass ``ctx.shows_progress`` as ``progress=`` to the library functions a
        subcommand calls, so that their reports follow the same rule.
        """
        from graphpar.progress import progress

        return progress(total, desc, unit=unit, enabled=self.shows_progress)

    def collectively(self, fn):
        """Run ``fn()``; under MPI, an error on any rank is raised on every rank.

        The stage goes through :func:`graphpar.mpi.comm.run_collectively`,
        so that the job reports the error once instead of hanging.
        """
        if self.comm is None:
            return fn()
        from graphpar.mpi.comm import run_collectively

        return run_collectively(fn, self.comm)

    def slowest(self, seconds: float) -> float:
        """The largest of every rank's ``seconds`` (``seconds`` itself serially)."""
        if self.comm is None:
            return seconds
        from mpi4py import MPI

        return float(self.comm.allreduce(seconds, op=MPI.MAX))

    def timed(self, fn, *, start_together: bool = False):
        """Return ``(fn(), seconds)``: the slowest rank's time under MPI.

        ``start_together`` waits for every rank first, so that the time is the
        work's and not the wait for the slowest rank to arrive.
        """
        if start_together and self.comm is not None:
            self.comm.Barrier()
        t0 = time.perf_counter()
        out = fn()
        return out, self.slowest(time.perf_counter() - t0)

    def print(self, *args, **kwargs) -> None:
        """``print`` on rank 0 (or serially) only."""
        if self.is_root:
            print(*args, **kwargs)

    def report(self, fields: dict, text=None) -> None:
        """Print the report on rank 0: one JSON object with ``--json``, else text.

        ``text(fields)`` prints the text report; by default one ``key: value``
        line per field (:func:`print_report`).
        """
        if not self.is_root:
            return
        if self.as_json or text is None:
            print_report(fields, self.as_json)
        else:
            text(fields)

    def write(self, write, path=None, mode: str = "wb") -> None:
        """Write an output file on rank 0 alone; an error there is raised on every rank.

        With ``path``, ``write(f)`` is given the open temporary file of
        :func:`graphpar.io.atomic_write`, renamed to ``path`` when it returns:
        an error or a kill part-way leaves no half-written file. Without,
        ``write()`` is called as it is (and must write through ``atomic_write``).

        Examples
        --------
        >>> import os, tempfile
        >>> f = os.path.join(tempfile.mkdtemp(), "out.txt")
        >>> Context().write(lambda out: out.write("42\\n"), f, "w")
        >>> open(f).read()
        '42\\n'
        """
        if path is None:
            self.collectively(lambda: write() if self.is_root else None)
            return

        def write_file():
            if self.is_root:
                from graphpar.io import atomic_write

                with atomic_write(path, mode) as f:
                    write(f)

        self.collectively(write_file)

    def refuse_mpi(self, message: str) -> None:
        """Raise ``ValueError(message)`` on every rank when more than one rank runs."""
        if self.size > 1:
            def refuse():
                raise ValueError(message)

            self.collectively(refuse)


def _plain(value):
    import numpy as np

    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    return value


def print_report(fields: dict, as_json: bool) -> None:
    """Print every entry of ``fields``: one JSON object, or one ``key: value`` line each.

    Numpy scalars are printed as Python numbers; a non-finite float at the top
    level as the string ``"inf"``, ``"-inf"`` or ``"nan"`` (valid JSON).

    Examples
    --------
    >>> import numpy as np
    >>> print_report({"reached": 3, "time_s": 0.0012345}, as_json=False)
    reached: 3
    time_s:  0.0012345
    >>> print_report({"reached": 3, "max_distance": np.float64(7.0)}, as_json=True)
    {"reached": 3, "max_distance": 7.0}
    """
    if as_json:
        print(json.dumps({k: _plain(v) for k, v in fields.items()}))
        return
    width = max((len(k) for k in fields), default=0) + 1
    for key, value in fields.items():
        value = _plain(value)
        text = f"{value:.6g}" if isinstance(value, float) else str(value)
        print(f"{key + ':':<{width}} {text}")


# ---------------------------------------------------------------- running a subcommand
def _context(args, comm) -> Context:
    """Set this process's threads and return the run's context (collective under MPI)."""
    threads = getattr(args, "threads", None)
    flags = {"as_json": bool(getattr(args, "json", False)),
             "no_progress": bool(getattr(args, "quiet", False))}
    if comm is None:
        from graphpar.threads import set_threads

        return Context(threads=set_threads(threads), **flags)
    from graphpar.mpi.comm import run_collectively, setup_threads

    n = run_collectively(lambda: setup_threads(threads, comm), comm)
    return Context(comm=comm, rank=comm.Get_rank(), size=comm.Get_size(), threads=n,
                   **flags)


def run_command(args, under_mpi: bool) -> int:
    """Run the parsed subcommand ``args.func(args, ctx)``; report errors; return the status.

    ``under_mpi`` is :func:`graphpar.cli.main`'s one decision whether this
    process is a rank of an ``mpiexec`` job.

    Examples
    --------
    >>> from graphpar.cli import build_parser
    >>> run_command(build_parser().parse_args(["sssp"]), False)  # doctest: +SKIP
    graphpar: error: give a GRAPH_FILE or --generate SPEC
    2
    """
    if under_mpi:
        return _run_under_mpi(args)
    try:
        status = _run(args, _context(args, None))
    except USER_ERRORS as exc:
        print(f"graphpar: error: {error_message(exc)}", file=sys.stderr)
        return EXIT_USER_ERROR
    except KeyboardInterrupt:
        return report_interrupt(False)
    except Terminated:
        return report_terminated(False)
    return 0 if status is None else int(status)


def _run(args, ctx: Context):
    """``args.func(args, ctx)``, saying once on stderr if it has to compile kernels.

    The notice (:func:`graphpar._compile.compile_notice`) is printed by rank 0
    alone and not with ``--quiet``; a run whose kernels are all cached says nothing.
    """
    import warnings

    from graphpar._compile import compile_notice
    from graphpar.limits import check_environment

    ctx.collectively(check_environment)
    ctx.collectively(lambda: check_output_paths(args))
    with compile_notice(ctx.shows_progress), warnings.catch_warnings():
        warnings.showwarning = show_warning
        return args.func(args, ctx)


def show_warning(message, category, filename, lineno, file=None, line=None) -> None:
    """Print a warning as one ``graphpar: warning: ...`` line on stderr (a ``showwarning``).

    Printed with ``--quiet`` too, by the rank that warns: a warning is about
    the data or the result, not progress.
    """
    text = " ".join(str(message).split())
    print(f"graphpar: warning: {text}", file=sys.stderr if file is None else file)


# every subcommand option that names a file the run writes
OUTPUT_OPTIONS = ("output", "save_model", "history", "plot")

# The names an output option's file must end in, and why: every ``--plot`` is a PNG
# (graphpar.plot writes PNG whatever the name). A subcommand that writes one format to
# another option declares it on its parser, as
# ``parser.set_defaults(output_suffixes={"history": ((".csv",), "the history is written
# as CSV")})``; :func:`check_output_paths` checks them all.
PLOT_SUFFIXES = ((".png",), "the picture is written as a PNG")


def check_suffix(flag: str, path, suffixes: tuple[str, ...], why: str) -> None:
    """Refuse an output ``path`` whose name does not end in one of ``suffixes`` (in any case).

    ``flag`` names the option and ``why`` says what is written there.

    Raises
    ------
    ValueError
        Naming the option, the path and the suffixes it may end in.

    Examples
    --------
    >>> check_suffix("--plot", "runs/h.PNG", *PLOT_SUFFIXES)
    >>> check_suffix("--plot", "runs/h.jpg", *PLOT_SUFFIXES)
    Traceback (most recent call last):
    ...
    ValueError: --plot runs/h.jpg: the name must end in .png (the picture is written as a PNG)
    """
    if not str(path).lower().endswith(tuple(x.lower() for x in suffixes)):
        *rest, last = suffixes
        either = f"{', '.join(rest)} or {last}" if rest else last
        raise ValueError(f"{flag} {path}: the name must end in {either} ({why})")


def check_output_paths(args) -> None:
    """Refuse, before any work, an output whose folder is missing, that is a folder, that
    two options name, or that is one of the run's input files; an output whose name does
    not end in the suffix of what is written there (every ``--plot`` is a PNG, and what
    the subcommand declared in ``args.output_suffixes``); and ``--plot`` without
    matplotlib.

    The inputs are every other argument the command line gave as text that names
    an existing file (``GRAPH_FILE``, ``--features``, ``--sources``, ...: the
    options :class:`graphpar.cli.Parser` recorded in ``args.option_names``).
    matplotlib is not imported: a PNG's name needs no look at what it can write.

    Raises
    ------
    ValueError
        Naming the option and the path.

    Examples
    --------
    >>> import argparse
    >>> check_output_paths(argparse.Namespace(output="/no/such/folder/x.npz"))
    Traceback (most recent call last):
    ...
    ValueError: --output /no/such/folder/x.npz: the folder /no/such/folder does not exist
    >>> check_output_paths(argparse.Namespace(plot="curves.svg"))
    Traceback (most recent call last):
    ...
    ValueError: --plot curves.svg: the name must end in .png (the picture is written as a PNG)
    """
    import importlib.util
    import os

    seen: dict[str, str] = {}
    for opt in OUTPUT_OPTIONS:
        path = getattr(args, opt, None)
        if path is None:
            continue
        flag = "--" + opt.replace("_", "-")
        folder = os.path.dirname(os.path.abspath(path))
        if not os.path.isdir(folder):
            raise ValueError(f"{flag} {path}: the folder {folder} does not exist")
        if os.path.isdir(path):
            raise ValueError(f"{flag} {path}: is a folder, not a file")
        key = os.path.abspath(path)
        if key in seen:
            raise ValueError(f"{flag} and {seen[key]} name the same file, {path}")
        seen[key] = flag
        refuse_overwriting_an_input(args, path, f"{flag} {path}")
    rules = {"plot": PLOT_SUFFIXES, **(getattr(args, "output_suffixes", None) or {})}
    for opt in OUTPUT_OPTIONS:
        path = getattr(args, opt, None)
        if path is not None and opt in rules:
            check_suffix("--" + opt.replace("_", "-"), path, *rules[opt])
    if getattr(args, "plot", None) is not None and importlib.util.find_spec("matplotlib") is None:
        from graphpar.plot import INSTALL_HINT

        raise ValueError(f"--plot needs matplotlib; {INSTALL_HINT}")


def refuse_overwriting_an_input(args, path, what: str) -> None:
    """Refuse an output ``path`` that is the same file as one of ``args``' inputs.

    ``what`` names the output in the message (``"--output x.npy"``, or a side
    file a subcommand derives from it). The inputs are the options
    :class:`graphpar.cli.Parser` recorded in ``args.option_names``.
    """
    import os

    if not os.path.isfile(path):
        return
    for dest, name in getattr(args, "option_names", {}).items():
        values = getattr(args, dest, None)
        if dest in OUTPUT_OPTIONS:
            continue
        for value in values if isinstance(values, (list, tuple)) else [values]:
            if (isinstance(value, (str, os.PathLike)) and os.path.isfile(value)
                    and os.path.samefile(value, path)):
                raise ValueError(f"{what} would overwrite the input {name} {value}; "
                                 "write it to another file")


def report_interrupt(under_mpi: bool) -> int:
    """Report Ctrl-C outside :func:`run_command` (while starting up); return 130.

    Under ``mpiexec`` every rank is ended, the message printed once.
    """
    if under_mpi:
        from graphpar.mpi.comm import abort_job

        abort_job(INTERRUPTED, EXIT_INTERRUPTED)
    # Ctrl-C in the middle of a Numba/LLVM compile leaves half-built objects whose
    # destructors fail at exit ("Exception ignored in ... OutputString.__del__"): after
    # an interrupt that is noise, not a report.
    sys.unraisablehook = lambda unraisable: None
    print(INTERRUPTED, file=sys.stderr)
    return EXIT_INTERRUPTED


def report_terminated(under_mpi: bool) -> int:
    """Report SIGTERM (:class:`Terminated`) once; return 143.

    Under ``mpiexec`` every rank is ended, the message printed once.
    """
    if under_mpi:
        from graphpar.mpi.comm import abort_job

        abort_job(TERMINATED, EXIT_TERMINATED)
    sys.unraisablehook = lambda unraisable: None  # as after Ctrl-C: no destructor noise
    print(TERMINATED, file=sys.stderr)
    return EXIT_TERMINATED


def _run_under_mpi(args) -> int:
    try:
        from graphpar.mpi.comm import abort_job, get_comm
    except (KeyboardInterrupt, Terminated) as exc:  # while MPI is still loading: no job yet
        from graphpar.mpi import launcher_rank

        sys.unraisablehook = lambda unraisable: None
        stop = ((INTERRUPTED, EXIT_INTERRUPTED) if isinstance(exc, KeyboardInterrupt)
                else (TERMINATED, EXIT_TERMINATED))
        if launcher_rank() == 0:
            print(stop[0], file=sys.stderr)
        return stop[1]

    rank = 0
    try:
        comm = get_comm()
        rank = comm.Get_rank()
        status = _run(args, _context(args, comm))
    except USER_ERRORS as exc:
        msg = f"graphpar: error: {error_message(exc)}"
        if getattr(exc, "graphpar_collective", False):
            if rank == 0:
                print(msg, file=sys.stderr)
            return EXIT_USER_ERROR
        abort_job(msg, EXIT_USER_ERROR)
    except KeyboardInterrupt:
        # mpiexec passes Ctrl-C to every rank; a rank may be waiting in MPI and
        # never see it, so each rank that does ends the job (rank 0 first)
        abort_job(INTERRUPTED, EXIT_INTERRUPTED)
    except Terminated:  # the launcher passes SIGTERM on to every rank: as Ctrl-C
        abort_job(TERMINATED, EXIT_TERMINATED)
    except BaseException as exc:  # noqa: BLE001 - any failure must end every rank
        if isinstance(exc, SystemExit) and not exc.code:
            return 0
        import traceback

        text = "".join(traceback.format_exception(exc)).rstrip()
        abort_job(f"graphpar: rank {rank} failed:\n{text}", 1)
    return 0 if status is None else int(status)
