"""Launching benchmark workers under the venv's mpiexec and reading back their results."""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

RESULT_TAG = "RESULT "


def emit_result(obj: dict) -> None:
    """Print ``obj`` as the worker's result line (call it on one rank only)."""
    print(RESULT_TAG + json.dumps(obj), flush=True)


def run_worker(script: str, ranks: int, args: list[str], *, timeout: float,
               env: dict | None = None) -> dict:
    """Run ``mpiexec -n RANKS python SCRIPT ARGS`` and return its last result line as a dict.

    ``env`` adds to this process's environment. The venv's ``mpiexec`` (from the
    mpich wheel) is used when present. A failing job raises ``RuntimeError``
    with its output.

    Examples
    --------
    >>> run_worker(__file__, 2, ["--worker"], timeout=600)  # doctest: +SKIP
    {'time_s': 0.41}
    """
    exe = Path(sys.executable).parent / "mpiexec"
    cmd = [str(exe if exe.exists() else "mpiexec"), "-n", str(ranks), sys.executable, script,
           *args]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout,
                          env=dict(os.environ, **(env or {})))
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed:\n{proc.stdout}\n{proc.stderr}")
    line = [ln for ln in proc.stdout.splitlines() if ln.startswith(RESULT_TAG)][-1]
    return json.loads(line[len(RESULT_TAG):])


def add_driver_options(p: argparse.ArgumentParser, *, reps: int, timeout: float) -> None:
    """Add the options every distributed benchmark shares.

    Public: ``--reps``, ``--seed``, ``--timeout`` and ``--no-reference``. Hidden, for
    the driver's own ``mpiexec`` jobs: ``--reference``, ``--worker`` and ``--threads``.
    """
    p.add_argument("--reps", type=int, default=reps)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--timeout", type=float, default=timeout)
    p.add_argument("--no-reference", dest="reference", action="store_false")
    p.add_argument("--reference", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--threads", type=int, default=1, help=argparse.SUPPRESS)


def run_interleaved(configs, reps: int, launch) -> dict:
    """Return ``{(ranks, threads): [result, ...]}`` from ``launch(ranks, threads)``.

    The configurations run in turn, ``reps`` times over, so that background load
    on a shared machine hits them alike.
    """
    results = {c: [] for c in configs}
    for _ in range(reps):
        for ranks, threads in configs:
            results[(ranks, threads)].append(launch(ranks, threads))
    return results
