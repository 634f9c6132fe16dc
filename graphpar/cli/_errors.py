"""Turn bad-input exceptions into one clear error line and a non-zero exit status."""

from __future__ import annotations

import sys

USER_ERRORS = (ValueError, TypeError, OSError, KeyError)
EXIT_USER_ERROR = 2


def run_reporting_errors(func, args) -> int:
    """Call ``func(args)``; print ``graphpar: error: ...`` for bad input and return 2."""
    try:
        status = func(args)
    except USER_ERRORS as exc:
        msg = str(exc) if not isinstance(exc, KeyError) else str(exc.args[0])
        print(f"graphpar: error: {msg}", file=sys.stderr)
        return EXIT_USER_ERROR
    except KeyboardInterrupt:
        print("graphpar: interrupted", file=sys.stderr)
        return 130
    return 0 if status is None else int(status)
