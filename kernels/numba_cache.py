"""Numba's on-disk cache, made safe for processes that compile graphpar's kernels at once.

Numba (0.68) stores each compiled specialisation of a ``cache=True`` function
in a data file named by a serial number, ``<function>.<k>.nbc``, and an index
file mapping signatures to those names. Saving reads the index, takes the
first number it does not list, writes the index, then the data. Two processes
that compile two specialisations of one function at the same time (two
pytest-xdist workers, the ranks of a cold ``mpiexec`` job, two jobs sharing a
home directory's cache) can both take number 1: the index then names one
signature's file while the file holds the other's machine code, for good or
until the second write lands. A process that loads that signature runs the
other specialisation's code on its arrays, and computes garbage without an
error (reproduced here: an int64 kernel's code run on float64 arrays; Numba
issue 4807 reports crashes from the same race).

So the caches of graphpar's functions name each data file by a hash of its
signature key (two signatures never share a file) and write the data before
the index (an index never names a file not yet complete). A save holds an
exclusive lock (``flock`` of a file beside the index, where the system grants
one) while it writes the data, reads the index again and writes it, so that
two processes saving at once keep both entries; without the lock an entry
could be lost, which costs a compilation more later but never gives a wrong
result. Numbered files were reused after a change of the source; hashed ones
are not, so each save also removes, under the lock, the function's data files
that its index does not name (those of an older source).

:func:`install` applies this to every cached function whose module is in
:data:`MODULES`, when Numba makes its cache (at decoration, including the
variants made on first use); other functions keep Numba's behaviour.
"""

from __future__ import annotations

import contextlib
import hashlib
import os

from numba.core import caching

try:
    import fcntl
except ImportError:  # pragma: no cover - not POSIX: no lock, an entry may be lost
    fcntl = None

#: Module name prefixes of the functions whose caches are keyed by signature.
MODULES = ("graphpar.",)


class KeyedCacheFile(caching.IndexDataCacheFile):
    """An index and data files whose data file names are hashes of the signature keys."""

    def save(self, key, data):
        # all under the lock: the sweep then never meets another process's data file
        # written but not yet named by the index
        name = self.data_name_for(key)
        with self._index_lock():
            self._save_data(name, data)  # complete before any index names it
            overloads = self._load_index()  # the latest index, read under the lock
            overloads[key] = name
            self._save_index(overloads)
            self._remove_unnamed(set(overloads.values()))

    @property
    def _stem(self) -> str:
        """The index's name without ``.nbi``: every data file of the function starts so."""
        return self._index_name[:-len(".nbi")]

    def _remove_unnamed(self, named: set) -> None:
        prefix = self._stem + "."
        try:
            names = os.listdir(self._cache_path)
        except OSError:
            return
        for old in names:
            if old.startswith(prefix) and old.endswith(".nbc") and old not in named:
                with contextlib.suppress(OSError):  # (another process's sweep took it)
                    os.remove(os.path.join(self._cache_path, old))

    @contextlib.contextmanager
    def _index_lock(self):
        if fcntl is None:
            yield
            return
        try:
            f = open(self._index_path + ".lock", "a")  # noqa: SIM115 (closed below)
        except OSError:  # a read-only cache: Numba's own save fails after this
            yield
            return
        try:
            with contextlib.suppress(OSError):  # no locks here (some network file
                fcntl.flock(f, fcntl.LOCK_EX)  # systems): an entry may be lost
            yield
        finally:
            f.close()  # (releases the lock)

    def data_name_for(self, key) -> str:
        """The data file of ``key``: the index's name with a hash of the key."""
        digest = hashlib.sha256(repr(key).encode()).hexdigest()[:24]
        return f"{self._stem}.{digest}.nbc"


_original_init = caching.FunctionCache.__init__


#: What :class:`KeyedCacheFile` uses of Numba's cache file (checked on Numba 0.68);
#: a Numba without one of these keeps its own class.
_NEEDS = ("_index_name", "_index_path", "_cache_path", "_load_index", "_save_index",
          "_save_data")


def _keyed_init(self, py_func):
    _original_init(self, py_func)
    cache_file = getattr(self, "_cache_file", None)
    if (getattr(py_func, "__module__", "").startswith(MODULES)
            and type(cache_file) is caching.IndexDataCacheFile
            and all(hasattr(cache_file, name) for name in _NEEDS)):
        cache_file.__class__ = KeyedCacheFile


def install() -> None:
    """Key the caches of the functions in :data:`MODULES` made from now on (idempotent)."""
    caching.FunctionCache.__init__ = _keyed_init
