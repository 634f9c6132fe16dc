"""Worker threads kept between calls, for the kernels run on several Python threads.

No Numba here: :mod:`graphpar.csgraph` imports it without loading the kernels.
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
