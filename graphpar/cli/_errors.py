"""Turn bad-input exceptions into one clear error line and a non-zero exit status.

Serial runs print ``graphpar: error: ...`` and exit 2 (Ctrl-C: ``graphpar:
interrupted``, exit 130). Under ``mpiexec`` an error must end the whole job,
never leave the other ranks waiting in a collective: an error that every rank
agreed on (the distributed readers and algorithms raise the same exception on
every rank) is printed by rank 0 alone and every rank exits 2; a user error on
some ranks only prints its message once and aborts the job (``MPI_Abort``,
status 2), within seconds; Ctrl-C prints ``graphpar: interrupted`` once and
aborts with status 130; anything else is a bug, printed with its traceback.
The user errors are :data:`graphpar.errors.USER_ERRORS`.
"""

from __future__ import annotations

import sys

from graphpar.errors import EXIT_INTERRUPTED, EXIT_USER_ERROR, USER_ERRORS
from graphpar.errors import error_message as _message

INTERRUPTED = "graphpar: interrupted"


def run_reporting_errors(func, args) -> int:
    """Call ``func(args)``; print ``graphpar: error: ...`` for bad input and return 2."""
    from graphpar.mpi import launched_under_mpi

    if launched_under_mpi():
        return _run_under_mpi(func, args)
    try:
        status = func(args)
    except USER_ERRORS as exc:
        print(f"graphpar: error: {_message(exc)}", file=sys.stderr)
        return EXIT_USER_ERROR
    except KeyboardInterrupt:
        print(INTERRUPTED, file=sys.stderr)
        return EXIT_INTERRUPTED
    return 0 if status is None else int(status)


def report_interrupt() -> int:
    """Report Ctrl-C outside :func:`run_reporting_errors` (while starting up); return 130.

    Under ``mpiexec`` every rank is ended, the message printed once.
    """
    from graphpar.mpi import launched_under_mpi

    if launched_under_mpi():
        from graphpar.mpi.comm import abort_job

        abort_job(INTERRUPTED, EXIT_INTERRUPTED)
    print(INTERRUPTED, file=sys.stderr)
    return EXIT_INTERRUPTED


def _run_under_mpi(func, args) -> int:
    from graphpar.mpi import launcher_rank

    try:
        status = func(args)
    except USER_ERRORS as exc:
        msg = f"graphpar: error: {_message(exc)}"
        if getattr(exc, "graphpar_collective", False):
            if launcher_rank() == 0:
                print(msg, file=sys.stderr)
            return EXIT_USER_ERROR
        from graphpar.mpi.comm import abort_job

        abort_job(msg, EXIT_USER_ERROR)
    except KeyboardInterrupt:
        # mpiexec passes Ctrl-C to every rank; a rank may be waiting in MPI and
        # never see it, so each rank that does ends the job (rank 0 first)
        from graphpar.mpi.comm import abort_job

        abort_job(INTERRUPTED, EXIT_INTERRUPTED)
    except BaseException as exc:  # noqa: BLE001 - any failure must end every rank
        if isinstance(exc, SystemExit) and not exc.code:
            return 0
        import traceback

        from graphpar.mpi.comm import abort_job

        text = "".join(traceback.format_exception(exc)).rstrip()
        abort_job(f"graphpar: rank {launcher_rank()} failed:\n{text}", 1)
    return 0 if status is None else int(status)
