"""Run one of the scripts of this folder under mpiexec, with a timeout (used by the tests)."""

from __future__ import annotations

import subprocess
from pathlib import Path

from conftest import MPI_TIMEOUT, run_mpiexec

HERE = Path(__file__).resolve().parent


def run_script(mpiexec: str, nprocs: int, script: str, *args: str,
               timeout: float = MPI_TIMEOUT) -> subprocess.CompletedProcess:
    """``mpiexec -n nprocs python HERE/script args`` through :func:`conftest.run_mpiexec`.

    One Numba thread and one OpenBLAS thread per rank; waiting ranks sleep
    instead of spinning; a run longer than ``timeout`` seconds fails the test.
    """
    return run_mpiexec(nprocs, [HERE / script, *args], timeout=timeout, launcher=mpiexec,
                       env={"OMP_NUM_THREADS": "1", "PYTHONWARNINGS": "ignore"}, cwd=HERE)
