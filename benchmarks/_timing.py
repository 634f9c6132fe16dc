"""Timing helpers shared by the benchmark scripts."""

from __future__ import annotations

import statistics
import time


def median_time(fn, repeat: int = 5, warmup: int = 1) -> tuple[float, list[float]]:
    """Call ``fn()`` ``warmup`` times, then time ``repeat`` calls; return (median, times).

    Examples
    --------
    >>> med, times = median_time(lambda: sum(range(100)), repeat=3)
    >>> len(times)
    3
    """
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), times


def fmt_ratio(reference: float, ours: float) -> str:
    """Format how many times faster ``ours`` is than ``reference`` (e.g. ``'3.21x'``)."""
    return f"{reference / ours:.2f}x" if ours > 0 else "inf"
