"""The errors graphpar reports to users, defined once for the API, the CLI and the MPI layer.

A *user error* is bad input or an input too large for the limits, not a bug:
the CLI prints it as one ``graphpar: error: ...`` line and exits with status
2, serially and under ``mpiexec``. Anything else is a bug and keeps its
traceback.

Examples
--------
>>> from graphpar.errors import LimitError, is_user_error
>>> is_user_error(LimitError("g.gr: declares 10**9 vertices"))
True
>>> is_user_error(ZeroDivisionError())
False
"""

from __future__ import annotations

__all__ = [
    "GraphFormatError", "LimitError", "USER_ERRORS", "EXIT_USER_ERROR", "EXIT_INTERRUPTED",
    "is_user_error", "error_message",
]

EXIT_USER_ERROR = 2
EXIT_INTERRUPTED = 130


class GraphFormatError(ValueError):
    """A graph file that does not follow its format.

    The message names the file, the line number and what was expected, e.g.
    ``g.gr: line 12: expected an integer vertex id (the head v of 'a u v w'), got 'x7'``.

    Examples
    --------
    >>> issubclass(GraphFormatError, ValueError)
    True
    """


class LimitError(ValueError):
    """An input that declares more than graphpar will allocate for it.

    The message names the input, the number it declares, the limit, and the
    environment variable that raises the limit (see README, "Limits and errors").

    Examples
    --------
    >>> issubclass(LimitError, ValueError)
    True
    """


# UnicodeDecodeError is a ValueError; EOFError is what a truncated compressed
# stream raises; MemoryError is an input too large for this machine.
USER_ERRORS: tuple[type[BaseException], ...] = (
    ValueError, TypeError, OSError, KeyError, EOFError, MemoryError,
)


def is_user_error(exc: BaseException) -> bool:
    """Return True when ``exc`` is bad input (reported as one line), not a bug.

    Examples
    --------
    >>> is_user_error(ValueError("x")), is_user_error(RuntimeError("x"))
    (True, False)
    """
    return isinstance(exc, USER_ERRORS)


def error_message(exc: BaseException) -> str:
    """Return the one-line text of a user error (without the ``graphpar: error:`` prefix).

    Examples
    --------
    >>> error_message(KeyError("no column 'age'"))
    "no column 'age'"
    >>> error_message(MemoryError())
    'out of memory (the input is too large for this machine; see README, "Limits and errors")'

    An error that another MPI rank reported (:func:`graphpar.mpi.comm.agree_on_error`)
    carries that rank's text in ``graphpar_message``, which is returned as it is:

    >>> exc = EOFError("x.gr.gz: compressed file ended early")
    >>> exc.graphpar_message = error_message(exc)
    >>> error_message(exc)
    'unexpected end of input: x.gr.gz: compressed file ended early'
    """
    told = getattr(exc, "graphpar_message", None)
    if isinstance(told, str):
        return told
    if isinstance(exc, KeyError) and exc.args:
        return str(exc.args[0])
    if isinstance(exc, MemoryError):
        detail = str(exc)
        base = (
            "out of memory (the input is too large for this machine; "
            "see README, \"Limits and errors\")"
        )
        return f"{base}: {detail}" if detail else base
    if isinstance(exc, EOFError):
        return f"unexpected end of input: {exc}" if str(exc) else "unexpected end of input"
    text = str(exc)
    return text if text else type(exc).__name__
