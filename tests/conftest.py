"""Shared test fixtures: the real data sets (through GRAPHPAR_DATA) and helpers.

The suite must pass on a machine shared with other busy processes: no test
asserts a duration, Hypothesis has no deadline, and ``mpiexec`` runs go through
:func:`run_mpiexec` (a generous timeout, one Numba thread per rank, and ranks
that sleep instead of spinning while they wait); the scripts they run live in
``tests/mpi/`` (:func:`run_mpi_script`).

Test modules import the helpers of ``tests/`` (``naive_*``, ``capped``) and of
``tests/mpi/`` (``_common``) through pytest's ``pythonpath`` setting in
pyproject.toml; scripts run under mpiexec get the same folders through
``PYTHONPATH`` (:func:`mpi_env`).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

# A loaded machine makes any example slow: no per-example deadline, and no failure
# because generating the data took long. Tests that pass their own settings keep these.
settings.register_profile("graphpar", deadline=None,
                          suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("graphpar")

TESTS = Path(__file__).resolve().parent
ROOT = TESTS.parent
MPI_SCRIPTS = TESTS / "mpi"


def data_root() -> Path | None:
    """Where the shared real data sets are: GRAPHPAR_DATA, else ../shared/datasets."""
    env = os.environ.get("GRAPHPAR_DATA")
    candidates = [Path(env)] if env else [ROOT.parent / "shared" / "datasets"]
    for c in candidates:
        if c.is_dir():
            return c
    return None


@pytest.fixture(params=["numpy", "kernels"])
def cox_evaluation(request, monkeypatch):
    """Run a test's Cox fits through each evaluation: NumPy (below
    ``NUMPY_ROWS_BELOW`` sorted rows, as small fits run) and the compiled kernels,
    the baseline hazard's too (as from ``GROUP_KERNEL_ROWS`` rows and groups)."""
    if request.param == "kernels":
        from graphpar import _cox_baseline, _cox_problem

        monkeypatch.setattr(_cox_problem, "NUMPY_ROWS_BELOW", 0)
        monkeypatch.setattr(_cox_baseline, "GROUP_KERNEL_ROWS", 0)
    return request.param


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """The shared data folder; in CI its absence is an error, elsewhere a skip."""
    root = data_root()
    if root is None:
        if os.environ.get("CI"):
            pytest.fail("GRAPHPAR_DATA is not set to the shared data sets in CI")
        pytest.skip("real data not found: set GRAPHPAR_DATA")
    return root


@pytest.fixture(scope="session")
def rome_path(shared_data) -> Path:
    return shared_data / "dimacs" / "rome99.gr"


@pytest.fixture(scope="session")
def planetoid_dir(shared_data) -> Path:
    return shared_data / "planetoid"


def graphpar_cmd() -> list[str]:
    """The command that runs the installed CLI in a subprocess."""
    return [sys.executable, "-m", "graphpar"]


def interrupt_generate_while_writing(tmp_path: Path, sig: int, timeout: float = 600
                                     ) -> subprocess.CompletedProcess:
    """Start ``graphpar generate`` writing ``tmp_path/big.el`` (20 million edges), send it
    ``sig`` once its temporary file holds bytes, and return the finished process with its
    output. Skips the test when the write ends before the signal could be sent."""
    import time

    proc = subprocess.Popen(
        [*graphpar_cmd(), "generate", "uniform", "--n", "2000000", "--m", "20000000",
         "--quiet", "-o", str(tmp_path / "big.el")],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    try:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline and proc.poll() is None:
            tmp = [p for p in tmp_path.iterdir() if p.name.startswith(".big.el.")]
            if tmp and tmp[0].stat().st_size > 0:
                break
            time.sleep(0.05)
        if proc.poll() is not None:
            pytest.skip("the write finished before the signal could be sent")
        proc.send_signal(sig)
        stdout, stderr = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=60)
    return subprocess.CompletedProcess(proc.args, proc.returncode, stdout, stderr)


def mpiexec() -> str:
    """The mpiexec from the mpich wheel, next to this Python."""
    exe = Path(sys.executable).parent / "mpiexec"
    return str(exe) if exe.exists() else "mpiexec"


# seconds for one mpiexec launch: 4 ranks compiling the kernels on 2 loaded cores
# (a cold Numba cache) took about 3 minutes here
MPI_TIMEOUT = 600

# While a rank waits (in a collective, or for a slower rank to finish compiling),
# MPICH polls without ever leaving the core, and libgomp's idle threads spin: with
# more ranks than cores, plus other busy processes, the waiting ranks take the
# cores the working ones need. MPICH's heavy yield (nanosleep in its waiting loop)
# measured, for tests/mpi/dist_checks.py at 4 ranks with two busy loops on
# 2 cores: 25-30 s of CPU and 22-42 s wall by default, 9-10 s CPU and 11-13 s wall
# with it. Its light yield (sched_yield: MPIR_CVAR_CH4_PROGRESS_THROTTLE, or
# the GRAPHPAR_MPI_YIELD switch graphpar had) changed neither. Passive OpenMP waiting matters
# where a rank runs 2 Numba threads (dist_checks' threaded check: 3-11 s -> 3-5 s).
QUIET_WAITING = {
    "MPIR_CVAR_ENABLE_HEAVY_YIELD": "1",
    "OMP_WAIT_POLICY": "passive",
}


def mpi_env(threads: int = 1, env: dict | None = None) -> dict:
    """The environment of ranks started by the tests.

    ``threads`` Numba threads per rank (``GRAPHPAR_NUM_THREADS``) and one
    OpenBLAS thread, so that ranks times threads stays within the cores;
    :data:`QUIET_WAITING` unless the caller's environment already sets those
    variables; ``tests/`` and ``tests/mpi/`` first on ``PYTHONPATH`` (so that
    the scripts import ``_common`` and ``naive_*``); then ``env`` on top.
    """
    out = {**QUIET_WAITING, **os.environ}
    path = [str(TESTS), str(MPI_SCRIPTS)] + [p for p in [out.get("PYTHONPATH")] if p]
    out.update(GRAPHPAR_NUM_THREADS=str(threads), OPENBLAS_NUM_THREADS="1",
               PYTHONPATH=os.pathsep.join(path))
    out.update(env or {})
    return out


def run_mpiexec(nranks: int | None, args: list, *, timeout: float = MPI_TIMEOUT,
                env: dict | None = None, cwd=None, threads: int = 1,
                launcher: str | None = None, preexec_fn=None,
                input: str | None = None) -> subprocess.CompletedProcess:
    """Run ``mpiexec -n nranks python ARGS`` with :func:`mpi_env`; capture text output.

    ``nranks=None`` runs ``python ARGS`` alone, in the same environment (the
    serial run of the same command). ``launcher`` is the mpiexec to use (by
    default :func:`mpiexec`); ``preexec_fn`` runs in the child before it starts
    (mpiexec's ranks inherit, e.g., its resource limits); ``input`` is sent to
    its standard input. Output that is not UTF-8 is decoded with replacement
    characters. A run that outlives ``timeout`` (a hang: a rank that failed
    without ending the job) fails the calling test with the output so far.
    """
    cmd = [sys.executable, *map(str, args)]
    if nranks is not None:
        cmd = [launcher or mpiexec(), "-n", str(nranks), *cmd]
    try:
        return subprocess.run(cmd, capture_output=True, text=True, errors="replace",
                              timeout=timeout, env=mpi_env(threads, env), cwd=cwd,
                              preexec_fn=preexec_fn, input=input)
    except subprocess.TimeoutExpired as exc:
        def text(b):
            return b.decode(errors="replace") if isinstance(b, bytes) else (b or "")

        pytest.fail(f"timed out after {timeout} s: {' '.join(cmd)}\n"
                    f"{text(exc.stdout)[-3000:]}\n{text(exc.stderr)[-3000:]}")


def run_mpi_script(name: str, nranks: int, *args, **kwargs) -> subprocess.CompletedProcess:
    """Run the script ``tests/mpi/<name>`` with ``args`` under ``mpiexec -n nranks``.

    Keyword arguments go to :func:`run_mpiexec`.
    """
    return run_mpiexec(nranks, [MPI_SCRIPTS / name, *args], **kwargs)
