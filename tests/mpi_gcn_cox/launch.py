"""Run one of the scripts of this folder under mpiexec, with a timeout (used by the tests)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def run_script(mpiexec: str, nprocs: int, script: str, *args: str,
               timeout: float = 240) -> subprocess.CompletedProcess:
    """``mpiexec -n nprocs python HERE/script args``, one Numba thread per rank."""
    env = dict(os.environ, GRAPHPAR_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1",
               OMP_NUM_THREADS="1", PYTHONWARNINGS="ignore")
    cmd = [mpiexec, "-n", str(nprocs), sys.executable, str(HERE / script), *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env,
                          cwd=HERE)
