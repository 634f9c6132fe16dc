"""Cold start: how long each workload's first call takes in a fresh environment.

Every measurement is a new Python process with an empty ``NUMBA_CACHE_DIR``, so
Numba compiles every kernel the call needs (what a new user, a fresh clone or a
new cluster node sees). For each workload the child process times its imports,
then the first call (wall and CPU seconds of that call: compilation plus a
small run); the script prints the median over ``--repeat`` processes. The CPU
seconds are those of the calling thread (``time.thread_time``), where Numba
compiles: on a busy machine wall time stretches with the load. The process's
CPU seconds are printed too (``proc cpu``): they also count a kernel compiled
on a pool thread (the kernels run by ``kernels.cox.run_chunks``), and Numba's
worker threads spinning after a parallel region. For ``demo`` both CPU figures
are the whole process's.

Workloads (issue 14 item 1, issue 15 item 5; target: each first call at most
5 s, ``graphpar demo`` at most 20 s):

* ``sssp``: ``graphpar.sssp(A, 0)`` on a 1000-vertex scipy CSR matrix;
* ``sssp-large``: the same on 20 000 vertices and 200 000 integer weights, above
  the bound (2^17 stored edges) where the search runs in parallel and compiles
  the parallel step and the packed integer adjacency;
* ``read``: ``graphpar.io.read_graph`` of the DIMACS Rome graph
  (``$GRAPHPAR_DATA/dimacs/rome99.gr``; without it a generated 100 x 100 grid
  in DIMACS format);
* ``aggregate``: ``graphpar.aggregate(A, H)`` with float32 features;
* ``generate``: ``graphpar.generate.kronecker(12)``;
* ``cox``: ``graphpar.CoxPH().fit(X, T, E)`` on 1000 generated patients;
* ``cox-large``: the same on 10 000, above the bound (4096 rows) where the fit
  runs the compiled kernels instead of NumPy;
* ``demo``: the whole ``graphpar demo`` command (wall and CPU of the process).

Usage::

    python benchmarks/coldstart.py [--repeat 3] [--only sssp,read,...]
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

_PRELUDE = r"""
import sys, time
t0 = time.perf_counter()
import numpy as np
import scipy.sparse as sp
import graphpar
imports = time.perf_counter() - t0
rng = np.random.default_rng(0)
"""

_SETUP = {
    "sssp": "A = sp.random(1000, 1000, density=0.01, random_state=0, format='csr')",
    "sssp-large": (
        "A = sp.random(20000, 20000, density=5e-4, random_state=0, format='csr',\n"
        "              data_rvs=lambda k: rng.integers(1, 256, k).astype(float))"
    ),
    "read": "path = sys.argv[1]",
    "aggregate": (
        "A = sp.random(1000, 1000, density=0.01, random_state=0, format='csr')\n"
        "H = rng.random((1000, 16), dtype=np.float32)"
    ),
    "generate": "from graphpar import generate",
    "cox": (
        "X = rng.normal(size=(1000, 3)); T = rng.exponential(size=1000)\n"
        "E = rng.random(1000) < 0.7"
    ),
    "cox-large": (
        "X = rng.normal(size=(10000, 3)); T = rng.exponential(size=10000)\n"
        "E = rng.random(10000) < 0.7"
    ),
}

_CALL = {
    "sssp": "graphpar.sssp(A, 0)",
    "sssp-large": "graphpar.sssp(A, 0)",
    "read": "graphpar.io.read_graph(path)",
    "aggregate": "graphpar.aggregate(A, H)",
    "generate": "generate.kronecker(12)",
    "cox": "graphpar.CoxPH().fit(X, T, E)",
    "cox-large": "graphpar.CoxPH().fit(X, T, E)",
}

_TIMED = r"""
w0 = time.perf_counter(); c0 = time.thread_time(); p0 = time.process_time()
{call}
wall = time.perf_counter() - w0; cpu = time.thread_time() - c0; pcpu = time.process_time() - p0
print(imports, wall, cpu, pcpu)
"""

WORKLOADS = (*_CALL, "demo")


def _grid_gr(path: Path, side: int = 100) -> None:
    """Write a side x side grid road graph in DIMACS format, in plain Python."""
    arcs = []
    for r in range(side):
        for c in range(side):
            u = r * side + c + 1
            for v in ((u + 1) if c + 1 < side else None, (u + side) if r + 1 < side else None):
                if v is not None:
                    w = 1 + (u * 7919 + v) % 255
                    arcs += [f"a {u} {v} {w}", f"a {v} {u} {w}"]
    path.write_text(f"c grid\np sp {side * side} {len(arcs)}\n" + "\n".join(arcs) + "\n")


def _fresh_env(cache: str) -> dict:
    env = dict(os.environ)
    env["NUMBA_CACHE_DIR"] = cache
    if env.get("GRAPHPAR_DATA"):  # the children run in the cache folder
        env["GRAPHPAR_DATA"] = str(Path(env["GRAPHPAR_DATA"]).resolve())
    return env


def run_first_call(name: str, extra: list[str]) -> tuple[float, float, float, float]:
    """One child process with an empty cache; return (imports, wall, thread cpu, process cpu)
    of the first call."""
    code = _PRELUDE + _SETUP[name] + "\n" + _TIMED.format(call=_CALL[name])
    with tempfile.TemporaryDirectory() as cache:
        # cwd: not the repository, whose graphpar would shadow a PYTHONPATH export (a child's
        # sys.path starts with its working directory)
        res = subprocess.run([sys.executable, "-c", code, *extra], env=_fresh_env(cache),
                             capture_output=True, text=True, timeout=900, cwd=cache)
    if res.returncode != 0:
        raise SystemExit(f"{name} failed:\n{res.stderr}")
    imports, wall, cpu, pcpu = map(float, res.stdout.split()[-4:])
    return imports, wall, cpu, pcpu


def run_demo() -> tuple[float, float, float, float]:
    """``graphpar demo`` in a child with an empty cache; return (0, wall, cpu, cpu) of the
    process."""
    with tempfile.TemporaryDirectory() as cache:
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.perf_counter()
        res = subprocess.run([sys.executable, "-m", "graphpar", "demo"],
                             env=_fresh_env(cache), capture_output=True, text=True,
                             timeout=900, cwd=cache)
        wall = time.perf_counter() - t0
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if res.returncode != 0:
        raise SystemExit(f"demo failed:\n{res.stdout}\n{res.stderr}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return 0.0, wall, cpu, cpu


def main(argv=None) -> None:
    """Run the selected workloads ``--repeat`` times each and print the medians."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--only", default=",".join(WORKLOADS),
                    help=f"comma-separated subset of {','.join(WORKLOADS)}")
    args = ap.parse_args(argv)
    names = [s for s in args.only.split(",") if s]
    unknown = sorted(set(names) - set(WORKLOADS))
    if unknown:
        ap.error(f"unknown workload(s) {unknown}; choose from {list(WORKLOADS)}")
    with tempfile.TemporaryDirectory() as tmp:
        data = os.environ.get("GRAPHPAR_DATA")
        rome = Path(data).resolve() / "dimacs" / "rome99.gr" if data else None
        if rome is None or not rome.exists():
            rome = Path(tmp) / "grid100.gr"
            _grid_gr(rome)
        print(f"cold start, fresh NUMBA_CACHE_DIR per process, median of {args.repeat}; "
              f"load average {os.getloadavg()[0]:.1f}; read = {rome.name}")
        print(f"{'workload':10} {'wall s':>8} {'cpu s':>8} {'proc cpu s':>10} {'imports s':>10}"
              "   runs (wall/cpu)")
        for name in names:
            runs = [run_demo() if name == "demo" else run_first_call(name, [str(rome)])
                    for _ in range(args.repeat)]
            imp = statistics.median(r[0] for r in runs)
            wall = statistics.median(r[1] for r in runs)
            cpu = statistics.median(r[2] for r in runs)
            pcpu = statistics.median(r[3] for r in runs)
            detail = ", ".join(f"{r[1]:.1f}/{r[2]:.1f}" for r in runs)
            print(f"{name:10} {wall:8.2f} {cpu:8.2f} {pcpu:10.2f} {imp:10.2f}   {detail}",
                  flush=True)
        print(f"load average at the end {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
