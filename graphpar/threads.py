"""Numba thread control shared by the library, the CLI and the distributed layer."""

from __future__ import annotations

import os

import numba

ENV_THREADS = "GRAPHPAR_NUM_THREADS"


def max_threads() -> int:
    """Return the most threads Numba can use in this process (``NUMBA_NUM_THREADS``).

    Examples
    --------
    >>> max_threads() >= 1
    True
    """
    return int(numba.config.NUMBA_NUM_THREADS)


def set_threads(threads: int | None = None) -> int:
    """Set the number of Numba threads and return it.

    Parameters
    ----------
    threads : int, optional
        Threads to use, from 1 to :func:`max_threads`. ``None`` reads
        ``GRAPHPAR_NUM_THREADS`` and otherwise leaves Numba's setting alone.

    Returns
    -------
    int
        The number of threads now in force.

    Examples
    --------
    >>> set_threads(1)
    1
    """
    source = "threads"
    if threads is None:
        env = os.environ.get(ENV_THREADS)
        if env is None or env.strip() == "":
            return int(numba.get_num_threads())
        source = ENV_THREADS
        try:
            threads = int(env)
        except ValueError:
            raise ValueError(f"{ENV_THREADS} must be a positive integer, got {env!r}") from None
    if isinstance(threads, bool) or int(threads) != threads:
        raise TypeError(f"{source} must be an integer, got {threads!r}")
    threads = int(threads)
    limit = max_threads()
    if not 1 <= threads <= limit:
        raise ValueError(
            f"{source} must be between 1 and {limit} (NUMBA_NUM_THREADS), got {threads}"
        )
    numba.set_num_threads(threads)
    return threads


def get_threads() -> int:
    """Return the number of Numba threads in force.

    Examples
    --------
    >>> get_threads() >= 1
    True
    """
    return int(numba.get_num_threads())
