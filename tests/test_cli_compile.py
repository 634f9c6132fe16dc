"""A cold first run says it compiles; ``graphpar compile`` warms the cache, read-only too.

Each test starts from an empty Numba cache of its own (``NUMBA_CACHE_DIR`` or, for the
read-only install, ``XDG_CACHE_HOME``), so these tests compile for real: they are slow
on a loaded machine, and have generous timeouts instead of timing assertions.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from conftest import graphpar_cmd

import graphpar
from graphpar._cox_problem import NUMPY_ROWS_BELOW
from graphpar.kernels.cox import NUMPY_LP_BELOW

TIMEOUT = 1800
NOTICE = "graphpar: compiling kernels (first run only"
PACKAGE = Path(graphpar.__file__).resolve().parent
KERNELS = Path(graphpar.kernels.__file__).resolve().parent


def _env(**extra):
    env = {k: v for k, v in os.environ.items() if not k.startswith("NUMBA_CACHE")}
    env.update({k: str(v) for k, v in extra.items()})
    return env


def _graphpar(*args, env, cmd=None, cwd=None):
    return subprocess.run([*(cmd or graphpar_cmd()), *map(str, args)], capture_output=True,
                          text=True, timeout=TIMEOUT, env=env, cwd=cwd)


def test_cold_cache_says_so_once_warm_cache_says_nothing(tmp_path):
    out = tmp_path / "g.gr"
    cold = tmp_path / "cache-a"
    r = _graphpar("generate", "grid", "--rows", 3, "-o", out, env=_env(NUMBA_CACHE_DIR=cold))
    assert r.returncode == 0, r.stderr
    assert r.stderr.count(NOTICE) == 1, r.stderr
    notice = next(line for line in r.stderr.splitlines() if line.startswith(NOTICE))
    assert str(cold) in notice  # names the cache it fills
    assert any(cold.iterdir())  # and the kernels went there
    warm = _graphpar("generate", "grid", "--rows", 3, "-o", out, env=_env(NUMBA_CACHE_DIR=cold))
    assert warm.returncode == 0, warm.stderr
    assert NOTICE not in warm.stderr and "compiling" not in warm.stderr


def test_quiet_cold_run_prints_no_notice(tmp_path):
    r = _graphpar("generate", "grid", "--rows", 3, "--quiet", "-o", tmp_path / "g.gr",
                  env=_env(NUMBA_CACHE_DIR=tmp_path / "cache"))
    assert r.returncode == 0, r.stderr
    assert r.stderr == ""
    assert any((tmp_path / "cache").iterdir())  # it did compile, silently


def _read_only_copy(root: Path) -> Path:
    """graphpar installed as a read-only package under ``root/site`` (no caches in it)."""
    site = root / "site"
    shutil.copytree(PACKAGE, site / "graphpar",
                    ignore=shutil.ignore_patterns("__pycache__", "kernels"))
    shutil.copytree(KERNELS, site / "graphpar" / "kernels",
                    ignore=shutil.ignore_patterns("__pycache__"))
    for path in sorted(site.rglob("*"), reverse=True):
        mode = path.stat().st_mode
        path.chmod(mode & ~(stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH))
    site.chmod(0o555)
    return site


def _without_write_override() -> list[str]:
    """A prefix that runs a command unable to write to read-only files, even as root."""
    if os.geteuid() != 0:
        return []
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        pytest.skip("running as root without setpriv: a read-only directory stays writable")
    return [setpriv, "--bounding-set=-dac_override,-dac_read_search"]


def test_compile_read_only_install_caches_in_the_user_cache(tmp_path):
    site = _read_only_copy(tmp_path)
    try:
        home, xdg = tmp_path / "home", tmp_path / "xdg"
        home.mkdir()
        env = _env(PYTHONPATH=site, HOME=home, XDG_CACHE_HOME=xdg)
        cmd = [*_without_write_override(), sys.executable, "-m", "graphpar"]
        probe = subprocess.run(
            [*cmd[:-2], "-c", "import graphpar, graphpar.kernels as k, os; "
             "print(graphpar.__file__); print(os.access(os.path.dirname(k.__file__), os.W_OK))"],
            capture_output=True, text=True, env=env, cwd=tmp_path, timeout=600)
        assert probe.returncode == 0, probe.stderr
        where, writable = probe.stdout.split()
        assert where == str(site / "graphpar" / "__init__.py") and writable == "False"

        first = _graphpar("compile", "--json", "--no-mpi", env=env, cmd=cmd, cwd=tmp_path)
        assert first.returncode == 0, first.stderr
        summary = json.loads(first.stdout)
        assert summary["compiled"] > 0 and summary["kernels"] > 0
        # Numba's fallback for an unwritable package: the user-wide cache
        assert summary["cache_dir"].startswith(str(xdg / "numba") + os.sep)
        assert Path(summary["cache_dir"]).is_dir() and any(Path(summary["cache_dir"]).iterdir())
        assert not list(site.rglob("*.nbi"))

        second = _graphpar("compile", "--json", "--no-mpi", env=env, cmd=cmd, cwd=tmp_path)
        assert second.returncode == 0, second.stderr
        # its warm-up data raises no warning the user would have to read
        assert "warning" not in first.stderr + second.stderr, first.stderr + second.stderr
        again = json.loads(second.stdout)
        assert again["compiled"] == 0 and again["kernels"] == summary["kernels"]
        assert NOTICE not in second.stderr

        # the cache covers real calls: none of these compiles anything
        out = tmp_path / "out"
        out.mkdir()
        # a Cox fit large enough for all the compiled kernels (small fits evaluate, small
        # blocks form eta, and small problems sort, in NumPy), times rounded so that they
        # tie and near-tie (0.1 + 0.2 against 0.3)
        rng = np.random.default_rng(5)
        n = 2 * max(NUMPY_ROWS_BELOW, NUMPY_LP_BELOW)
        t = np.round(rng.exponential(size=n), 2) + 0.01
        np.savetxt(out / "cox.csv", np.column_stack([t, rng.random(n) < 0.6,
                                                     rng.normal(size=(n, 2))]),
                   delimiter=",", header="t,e,x0,x1", comments="", fmt="%.17g")
        for args in (["generate", "kron", "--scale", 6, "-o", out / "k.gr.gz"],
                     ["sssp", out / "k.gr.gz", "--source", 0, "--verify"],
                     ["sssp", "--generate", "grid:5", "--source", 1],
                     # large inputs take other paths (checks, parallel steps): 2^18 edges
                     ["generate", "kron", "--scale", 14, "-o", out / "big.gr"],
                     ["sssp", out / "big.gr", "--source", 0],
                     ["gcn", "--dataset", "sbm", "--epochs", 2, "-q"],
                     ["cox", out / "cox.csv", "--time", "t", "--event", "e"],
                     ["cox", out / "cox.csv", "--time", "t", "--event", "e", "--ties",
                      "breslow"]):
            r = _graphpar(*args, env=env, cmd=cmd, cwd=tmp_path)
            assert r.returncode == 0, (args, r.stderr)
            assert NOTICE not in r.stderr, (args, r.stderr)
    finally:
        for path in [site, *site.rglob("*")]:
            path.chmod(path.stat().st_mode | stat.S_IWUSR)


def test_large_input_paths_lower_every_size_bound_and_restore_it():
    import importlib

    from graphpar._compile import SIZE_BOUNDS, large_input_paths

    def values():
        return [getattr(importlib.import_module(m), name) for m, name in SIZE_BOUNDS]

    before = values()
    assert all(isinstance(v, int | float) and v > 0 for v in before)
    with large_input_paths():
        assert values() == [0] * len(SIZE_BOUNDS)
    assert values() == before
    # a module that imports a bound by name holds its own copy: it must be listed too
    import graphpar.mpi  # noqa: F401  (its modules import bounds as well)

    names = {name for _, name in SIZE_BOUNDS}
    holders = {(m, name) for m, mod in sys.modules.items() if m.startswith("graphpar.")
               for name in names if isinstance(getattr(mod, name, None), int)}
    assert holders <= set(SIZE_BOUNDS), holders - set(SIZE_BOUNDS)
    # and none is read inside a kernel: compiled code freezes a global's value, so the
    # lowered bound would be compiled, and cached, into it
    from graphpar._compile import kernel_dispatchers

    for dispatcher in kernel_dispatchers():
        reads = set(dispatcher.py_func.__code__.co_names)
        assert not reads & names, (dispatcher.py_func.__qualname__, reads & names)
