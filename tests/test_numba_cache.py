"""Two processes compiling two specialisations of one kernel at once leave a cache that
gives each signature its own code (Numba's numbered data files do not: see
``graphpar.kernels.numba_cache``)."""

from __future__ import annotations

import os
import subprocess
import sys

TIMEOUT = 900

# A process that compiles (and caches) csr._first_bad_index for one index dtype, with
# Numba's index and data writes slowed as a busy host slows them: both processes read
# the empty index before either writes it, and the int64 process writes its data last.
COMPILE = """
import os, sys, time
import numpy as np
import numba.core.caching as caching

index_delay, data_delay = float(sys.argv[2]), float(sys.argv[3])
save_index = caching.IndexDataCacheFile._save_index
save_data = caching.IndexDataCacheFile._save_data

def slow_index(self, overloads):
    time.sleep(index_delay)
    save_index(self, overloads)

def slow_data(self, name, data):
    time.sleep(data_delay)
    save_data(self, name, data)

caching.IndexDataCacheFile._save_index = slow_index
caching.IndexDataCacheFile._save_data = slow_data
if sys.argv[4] == "numbered":  # Numba's own naming, to show that the race is real
    from graphpar.kernels import numba_cache
    numba_cache.KeyedCacheFile.save = caching.IndexDataCacheFile.save
from graphpar.kernels import csr
indices = np.array([0, 3, 9, 2], dtype=sys.argv[1])
assert csr._first_bad_index(indices, 5) == 2
"""

# A third process, later: every specialisation comes from the cache and must be right
CHECK = """
import numpy as np
from graphpar.kernels import csr
for dtype in ("int32", "int64"):
    indices = np.array([0, 3, 2, 9, 1], dtype=dtype)
    print(dtype, csr._first_bad_index(indices, 5), csr._first_bad_index(indices[:3], 5))
print("hits", sum(csr._first_bad_index.stats.cache_hits.values()))
"""


def _python(code, *args, cache):
    env = {k: v for k, v in os.environ.items() if not k.startswith("NUMBA_CACHE")}
    env["NUMBA_CACHE_DIR"] = str(cache)
    return subprocess.Popen([sys.executable, "-c", code, *map(str, args)], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


RIGHT = ["int32 3 -1", "int64 3 -1", "hits 2"]  # both right, both from the cache


def _race(cache, naming):
    procs = [_python(COMPILE, "int32", 1.5, 0.0, naming, cache=cache),
             _python(COMPILE, "int64", 1.0, 1.5, naming, cache=cache)]
    for p in procs:
        out, err = p.communicate(timeout=TIMEOUT)
        assert p.returncode == 0, err
    check = _python(CHECK, cache=cache)
    out, err = check.communicate(timeout=TIMEOUT)
    return check.returncode, out.splitlines(), err


def test_concurrent_compiles_of_two_signatures_leave_each_its_own_code(tmp_path):
    code, out, err = _race(tmp_path / "keyed", "keyed")
    assert code == 0, err
    assert out == RIGHT


def test_numbers_numba_gives_its_data_files_mix_up_the_signatures(tmp_path):
    # the same race with Numba's numbered names (what graphpar's caches used before): an
    # index entry names a file holding the other signature's code, so a later process
    # runs it on the wrong dtype and crashes or returns a wrong position
    code, out, err = _race(tmp_path / "numbered", "numbered")
    assert code != 0 or out != RIGHT, out


def test_data_files_are_named_by_signature(tmp_path):
    import numba
    from numba.core import caching

    from graphpar.kernels import numba_cache

    @numba.njit(cache=True)
    def twice(x):  # pragma: no cover - (compiled)
        return 2 * x

    cache = twice._cache._cache_file
    assert type(cache) is caching.IndexDataCacheFile  # not a graphpar function: Numba's own
    from graphpar.kernels import csr

    keyed = csr._first_bad_index._cache._cache_file
    assert type(keyed) is numba_cache.KeyedCacheFile
    a, b = keyed.data_name_for(("sig a", 1)), keyed.data_name_for(("sig b", 1))
    assert a != b and a.startswith("csr._first_bad_index-") and a.endswith(".nbc")


def test_a_save_after_a_source_change_removes_the_older_data_files(tmp_path):
    from graphpar.kernels.numba_cache import KeyedCacheFile

    old = KeyedCacheFile(str(tmp_path), "mod.f-1.py311", source_stamp=("t0", 10))
    old.save(("sig a",), ("code a",))
    old.save(("sig b",), ("code b",))
    other = KeyedCacheFile(str(tmp_path), "mod.f-12.py311", source_stamp=("t0", 10))
    other.save(("sig a",), ("code of another function",))
    assert len(list(tmp_path.glob("*.nbc"))) == 3
    assert old.load(("sig b",)) == ("code b",) and old.load(("sig c",)) is None
    new = KeyedCacheFile(str(tmp_path), "mod.f-1.py311", source_stamp=("t1", 11))
    assert new.load(("sig a",)) is None  # the index of another source is not read
    new.save(("sig c",), ("code c",))
    left = sorted(p.name for p in tmp_path.glob("*.nbc"))
    assert left == sorted([new.data_name_for(("sig c",)), other.data_name_for(("sig a",))])
    assert new.load(("sig c",)) == ("code c",)
    assert other.load(("sig a",)) == ("code of another function",)
