"""Run a callable at a given number of Numba threads (tests of thread-count independence)."""

import numba


def at_threads(k, fn):
    """Return ``fn()`` run with ``k`` Numba threads, restoring the previous count."""
    old = numba.get_num_threads()
    numba.set_num_threads(k)
    try:
        return fn()
    finally:
        numba.set_num_threads(old)
