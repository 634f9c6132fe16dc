"""Helper threads that take each call's work from a doorbell and stay awake between calls.

A call of a few milliseconds spread over two threads (20 searches of 0.15 ms on a small
graph, say) loses much of its second thread to waking it. A thread blocked in the OS
(a ``ThreadPoolExecutor`` worker waiting on its queue) took about 0.1 ms to run again on
this 2-vCPU virtual machine, and then ran with cold caches; with other work between calls
(scipy's search, in the benchmark) the idle vCPU slept deeper still. Measured on
Kronecker 10, 20 sources, calls alternating with scipy's: 2-thread / 1-thread throughput
1.57-1.67x through the executor, 1.78-1.92x with helpers kept awake as here.

So :class:`HandoffPool`'s helpers wait for the next call in a compiled loop
(:func:`graphpar.kernels.spin.backoff`: ``pause``, then ``sched_yield``, which hands the
core to any other runnable thread, so a busy machine loses little) for
:data:`~graphpar.kernels.spin.YIELD_TURNS` turns, some 10 ms here, and only then block on
a condition variable until the next call rings. A call is handed over by writing it to
one slot and ringing (incrementing a counter in :attr:`HandoffPool.ctl`); there is no
queue, so one call at a time holds the helpers, and a call made while another holds them
runs on its own thread alone (:meth:`HandoffPool.try_start` returns False).
"""

import atexit
import os
import threading

import numpy as np
from numba import njit

from graphpar.kernels.atomics import atomic_load
from graphpar.kernels.spin import YIELD_TURNS, backoff

#: Slots of :attr:`HandoffPool.ctl`: the doorbell (calls rung so far), the quit flag
#: (set at exit), and the last call (its doorbell number) in which a helper raised.
BELL, QUIT, FAILED = 0, 1, 2


@njit(cache=True, nogil=True)
def wait_for_ring(ctl, seen, turns):
    """Wait until ``ctl[BELL] != seen`` or ``ctl[QUIT]`` is set, for at most ``turns``
    turns of :func:`backoff`; return whether it happened."""
    turn = 0
    while atomic_load(ctl, BELL) == seen and atomic_load(ctl, QUIT) == 0:
        if turn >= turns:
            return False
        backoff(turn)
        turn += 1
    return True


@njit(cache=True, nogil=True)
def wait_for_count(counter, index, target, ctl, call):
    """Wait until ``counter[index] >= target`` or ``ctl[FAILED] == call``."""
    turn = 0
    while atomic_load(counter, index) < target and atomic_load(ctl, FAILED) != call:
        backoff(turn)
        turn += 1


class HandoffPool:
    """Helper threads for calls that share their work through a counter of finished items.

    The work ``fn(*args)`` is run by the caller and by ``count`` helpers at once; each run
    takes items until none is left, and adds every item it finishes to ``counter[index]``
    (as :func:`graphpar.kernels.sssp_many.many` does). The caller::

        started = pool.try_start(fn, args, count)
        try:
            fn(*args)
        finally:
            pool.finish(counter, index, total, started)

    :meth:`finish` returns once ``total`` items are finished, without waiting for a
    helper that found nothing left (or has not woken yet), and raises a helper's
    exception. The helpers are daemon threads, made on first use and when ``count``
    grows, forgotten in a fork's child (which has none of the parent's threads), and
    told to quit at exit.

    Examples
    --------
    >>> import numpy as np
    >>> from graphpar.kernels.atomics import fetch_add
    >>> from numba import njit
    >>> @njit(nogil=True)
    ... def square_all(x, out, counter):
    ...     i = fetch_add(counter, 0, 1)
    ...     while i < x.size:
    ...         out[i] = x[i] * x[i]
    ...         fetch_add(counter, 1, 1)
    ...         i = fetch_add(counter, 0, 1)
    >>> pool = HandoffPool("example")
    >>> x, out, counter = np.arange(5.0), np.zeros(5), np.zeros(8, np.int64)
    >>> started = pool.try_start(square_all, (x, out, counter), 1)
    >>> square_all(x, out, counter)
    >>> pool.finish(counter, 1, x.size, started)
    >>> out
    array([ 0.,  1.,  4.,  9., 16.])
    """

    def __init__(self, prefix: str) -> None:
        self.prefix = prefix
        self._forget()
        if hasattr(os, "register_at_fork"):
            os.register_at_fork(after_in_child=self._forget)
        atexit.register(self.close)

    def _forget(self) -> None:
        self.ctl = np.zeros(8, dtype=np.int64)  # 64 bytes: a cache line of its own, mostly
        self._cv = threading.Condition()
        self._held = threading.Lock()
        self._helpers: list[threading.Thread] = []
        self._task = None
        self._call = 0  # the doorbell number of the call holding the helpers
        self._error: BaseException | None = None  # of the call ctl[FAILED] names

    @property
    def helpers(self) -> int:
        """The number of helper threads made so far."""
        return len(self._helpers)

    def try_start(self, fn, args: tuple, count: int) -> bool:
        """Ring ``count`` helpers to run ``fn(*args)``; False (nothing rung) if another
        call holds them. After True, :meth:`finish` must follow."""
        if not self._held.acquire(blocking=False):
            return False
        try:
            while len(self._helpers) < count:
                self._add_helper()
            with self._cv:
                self.ctl[BELL] += 1
                self._call = int(self.ctl[BELL])
                self._task = (fn, args, count, self._call)
                self._cv.notify_all()
        except BaseException:
            self._held.release()
            raise
        return True

    def finish(self, counter: np.ndarray, index: int, total: int, started: bool,
               wait: bool = True) -> None:
        """Wait until ``counter[index] >= total`` (unless ``wait`` is False: the caller's
        own run failed), free the helpers for the next call, and raise a helper's
        exception. Does nothing when ``started`` is False."""
        if not started:
            return
        try:
            if wait and counter[index] < total:
                wait_for_count(counter, index, total, self.ctl, self._call)
            with self._cv:
                self._task = None  # (holds the call's arrays)
            if wait and self.ctl[FAILED] == self._call:
                raise self._error
        finally:
            self._held.release()

    def close(self) -> None:
        """Tell the helpers to return (at exit)."""
        with self._cv:
            self.ctl[QUIT] = 1
            self._cv.notify_all()

    def _add_helper(self) -> None:
        rank = len(self._helpers)
        thread = threading.Thread(target=self._serve,
                                  args=(rank, int(self.ctl[BELL]), self.ctl, self._cv),
                                  name=f"{self.prefix}_{rank}", daemon=True)
        thread.start()
        self._helpers.append(thread)

    def _serve(self, rank: int, seen: int, ctl: np.ndarray, cv: threading.Condition) -> None:
        while True:
            if not wait_for_ring(ctl, seen, YIELD_TURNS):
                with cv:
                    while ctl[BELL] == seen and not ctl[QUIT]:
                        cv.wait()
            with cv:
                if ctl[QUIT]:
                    return
                seen = int(ctl[BELL])
                task = self._task
            if task is None:  # a late wake: that call is over
                continue
            fn, args, count, call = task
            task = None
            if rank < count:
                try:
                    fn(*args)
                except BaseException as exc:  # raised again by that call's finish()
                    self._error = exc
                    ctl[FAILED] = call
            fn = args = None
