"""Communicators, threads per rank and ending the whole job on an error."""

from __future__ import annotations

import os
import signal
import sys
import time

from mpi4py import MPI

from graphpar.errors import EXIT_INTERRUPTED, EXIT_USER_ERROR, USER_ERRORS, error_message

__all__ = [
    "get_comm", "node_info", "setup_threads", "abort_job", "abort_on_error", "agree_on_error",
    "run_collectively",
]

_WORLD_DUP = None


def get_comm(comm=None):
    """Return ``comm``, or by default a duplicate of ``COMM_WORLD`` made once per process.

    graphpar's collectives run on their own duplicate so that they never match
    messages of the caller's code on ``COMM_WORLD``.

    Examples
    --------
    >>> get_comm().Get_size() >= 1
    True
    """
    global _WORLD_DUP
    if comm is not None:
        return comm
    if _WORLD_DUP is None:
        _WORLD_DUP = MPI.COMM_WORLD.Dup()
    return _WORLD_DUP


def _available_cores() -> set[int]:
    try:
        return set(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return set(range(os.cpu_count() or 1))


def node_info(comm=None) -> tuple[int, int, int]:
    """Return ``(node_rank, node_size, node_cores)`` for the calling rank.

    The ranks that share this node (``COMM_TYPE_SHARED``) pool the cores they
    may run on (the union of their CPU affinity sets), so that the answer is
    right whether or not the launcher binds ranks to cores. Collective.

    Examples
    --------
    >>> rank, size, cores = node_info()
    >>> 0 <= rank < size and cores >= 1
    True
    """
    comm = get_comm(comm)
    node = comm.Split_type(MPI.COMM_TYPE_SHARED, key=comm.Get_rank())
    try:
        cores = set().union(*node.allgather(_available_cores()))
        return node.Get_rank(), node.Get_size(), max(1, len(cores))
    finally:
        node.Free()


def setup_threads(threads: int | None = None, comm=None) -> int:
    """Set this rank's Numba threads and return them. Collective.

    ``threads`` wins; else ``GRAPHPAR_NUM_THREADS``; else the scheduler's
    ``SLURM_CPUS_PER_TASK`` or PBS's ``OMP_NUM_THREADS``/``NCPUS``; else
    (cores available on this node) // (ranks on this node), at least 1 and at
    most Numba's maximum (:func:`graphpar.threads.decide_threads`, the one
    rule). Oversubscribing the cores with ranks times threads is
    catastrophically slow, hence the default.

    Examples
    --------
    >>> setup_threads(1)
    1
    """
    from graphpar.threads import set_threads

    _, node_size, cores = node_info(comm)  # collective: every rank takes part
    return set_threads(threads, cores=cores, ranks_on_node=node_size)


def abort_job(message: str | None, status: int = 1, comm=None) -> None:
    """Print ``message`` (once, from this rank) to stderr and end every rank of the job.

    With more than one rank, a rank other than 0 waits a moment first: when
    every rank hits the same error, rank 0 prints it and ends the job before
    the others do, so the message appears once. Never returns.

    Examples
    --------
    >>> abort_job("graphpar: error: bad input", 2)  # doctest: +SKIP
    """
    try:  # a second Ctrl-C must not interrupt the way out with a traceback
        signal.signal(signal.SIGINT, signal.SIG_IGN)
    except ValueError:  # not the main thread: nothing to protect
        pass
    world = MPI.COMM_WORLD
    if world.Get_size() > 1 and world.Get_rank() != 0:
        time.sleep(0.5)
    if message:
        print(message, file=sys.stderr, flush=True)
    sys.stdout.flush()
    _wait_until_read()
    code = int(status) if status else 1
    world.Abort(code)
    os._exit(code)  # should Abort return, never fall back into Python's own error report


def _wait_until_read(limit: float = 10.0) -> None:
    """Wait (at most ``limit`` seconds) until mpiexec has read this rank's stdout and stderr.

    Under mpiexec they are pipes to the launcher; what is still in a pipe when
    ``Abort`` reaches the launcher is lost (on a loaded machine about 1 job in
    40 ended with an empty stderr).
    """
    import fcntl
    import stat
    import termios

    end = time.monotonic() + limit
    for fd in (1, 2):
        try:
            if not stat.S_ISFIFO(os.fstat(fd).st_mode):
                continue
            while time.monotonic() < end and int.from_bytes(
                    fcntl.ioctl(fd, termios.FIONREAD, bytes(4)), sys.byteorder):
                time.sleep(0.01)
        except OSError:  # closed, or no FIONREAD here: nothing to wait for
            continue


def agree_on_error(exc: BaseException | None, comm=None) -> BaseException | None:
    """Collectively agree whether any rank failed; return the first failure on every rank.

    Each rank passes the exception it caught in a stage that every rank runs
    (or None); all ranks get back the exception of the lowest failing rank (so
    they can raise the same error and rank 0 alone reports it), or None. The
    returned exception carries ``graphpar_collective = True``. Collective.

    Examples
    --------
    >>> agree_on_error(None) is None
    True
    """
    comm = get_comm(comm)
    failed = comm.allreduce(comm.Get_rank() if exc is not None else comm.Get_size(), op=MPI.MIN)
    if failed == comm.Get_size():
        return None
    info = None
    if comm.Get_rank() == failed:
        info = (type(exc), error_message(exc))
    kind, msg = comm.bcast(info, root=failed)
    out = exc if exc is not None and comm.Get_rank() == failed else _rebuild(kind, msg)
    # every rank raises it: the CLI prints it once (rank 0) instead of aborting
    try:
        out.graphpar_collective = True
        out.graphpar_message = msg  # the failing rank's text, printed as it is
    except AttributeError:
        pass
    return out


def _rebuild(kind: type, msg: str) -> BaseException:
    """An exception of ``kind`` (or of its nearest constructible base) carrying ``msg``.

    Some user errors cannot be built from a message alone (``UnicodeDecodeError``
    takes five arguments, numpy's out-of-memory error a shape and a dtype);
    their nearest base class that can (``UnicodeError``, ``MemoryError``) keeps
    them user errors on every rank, so that the job still ends with one line.
    """
    for cls in kind.__mro__:
        if not issubclass(cls, BaseException):
            continue
        try:
            out = cls(msg)
        except Exception:  # noqa: BLE001 - exception types with unusual constructors
            continue
        if isinstance(out, USER_ERRORS) or not issubclass(kind, USER_ERRORS):
            return out
    return RuntimeError(msg)


class abort_on_error:  # noqa: N801 - used like a function: ``with abort_on_error():``
    """Context manager: any exception in the block ends the whole MPI job.

    The failing rank prints ``graphpar: error: <message>`` (a user error,
    :data:`graphpar.errors.USER_ERRORS`; exit status 2), ``graphpar:
    interrupted`` (Ctrl-C; status 130) or the traceback (anything else; status
    1) and calls ``Abort`` on ``COMM_WORLD``, so that ranks waiting in a
    collective do not hang.

    Examples
    --------
    >>> with abort_on_error():   # doctest: +SKIP
    ...     run_my_job()
    """

    def __enter__(self):
        return self

    def __exit__(self, kind, exc, tb):
        if exc is None or isinstance(exc, SystemExit) and not exc.code:
            return False
        if isinstance(exc, USER_ERRORS):
            msg = error_message(exc)
            abort_job(f"graphpar: error: {msg}", EXIT_USER_ERROR)
        if isinstance(exc, KeyboardInterrupt):
            abort_job("graphpar: interrupted", EXIT_INTERRUPTED)
        import traceback

        text = "".join(traceback.format_exception(kind, exc, tb)).rstrip()
        abort_job(f"graphpar: rank {MPI.COMM_WORLD.Get_rank()} failed:\n{text}", 1)
        return False


def run_collectively(fn, comm=None):
    """Run ``fn()`` on every rank; if any rank fails, raise the first failure on every rank.

    A stage that reads input or checks arguments may fail on one rank only;
    wrapped in this, the other ranks raise the same error instead of waiting
    in their next collective. Catches the user errors
    (:data:`graphpar.errors.USER_ERRORS`); anything else is a bug and ends
    the job. Collective.

    Examples
    --------
    >>> run_collectively(lambda: 6 * 7)
    42
    """
    out, err = None, None
    try:
        out = fn()
    except USER_ERRORS as exc:
        err = exc
    err = agree_on_error(err, comm)
    if err is not None:
        raise err
    return out
