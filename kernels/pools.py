"""Worker threads kept between calls, for the kernels run on several Python threads.

The parallel search (:mod:`graphpar.kernels.sssp`) and the Cox passes
(:func:`graphpar.kernels.cox.run_chunks`) submit their threads' work to a
:class:`PersistentPool`'s executor. The many-source search hands its calls to
the helpers of :class:`graphpar.kernels.handoff.HandoffPool` instead, which stay
awake between calls.
"""

import os
import threading
from concurrent.futures import ThreadPoolExecutor


class PersistentPool:
    """Worker threads kept between calls: starting a thread costs more than a small call.

    :meth:`get` returns an executor of at least ``workers`` threads, made again to
    grow (a replaced executor is not shut down, since a call on another thread may
    still be submitting to it: its idle threads end when it is garbage-collected)
    and after a fork (the child has none of the parent's threads, and may inherit
    the lock held).

    Examples
    --------
    >>> pool = PersistentPool("example")
    >>> pool.get(2).submit(sum, [1, 2]).result()
    3
    """

    def __init__(self, prefix: str) -> None:
        self.prefix = prefix
        self._forget()
        if hasattr(os, "register_at_fork"):
            os.register_at_fork(after_in_child=self._forget)

    def _forget(self) -> None:
        self.executor = None
        self._lock = threading.Lock()

    def get(self, workers: int) -> ThreadPoolExecutor:
        with self._lock:
            if self.executor is None or self.executor._max_workers < workers:
                self.executor = ThreadPoolExecutor(max_workers=workers,
                                                   thread_name_prefix=self.prefix)
            return self.executor
