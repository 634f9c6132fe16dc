"""Run graphpar in a subprocess under a memory cap and a timeout (serially or under mpiexec).

Hostile-input tests use these so that a regression (a file that makes graphpar
allocate gigabytes, or a rank that hangs) fails the test instead of eating the
machine: every process gets ``RLIMIT_AS`` (inherited by mpiexec's ranks, each
capped on its own) and the whole run a generous timeout.
"""

from __future__ import annotations

import resource
from dataclasses import dataclass

from conftest import run_mpiexec

# Address space, not resident memory: Numba, LLVM and the thread pools reserve
# a few hundred MB of it; 1.5 GiB leaves ample room for any small input.
MEMORY_CAP = 1536 << 20
TIMEOUT = 600  # seconds; generous for a loaded machine and a cold Numba cache


@dataclass
class Run:
    """What a capped run printed and returned."""

    returncode: int
    stdout: str
    stderr: str

    @property
    def output(self) -> str:
        return self.stdout + self.stderr


def limit_memory(cap: int):
    """A ``preexec_fn`` that caps the child's address space at ``cap`` bytes."""

    def apply():
        resource.setrlimit(resource.RLIMIT_AS, (cap, cap))

    return apply


def run_capped(
    args: list[str], *, ranks: int | None = None, cap: int = MEMORY_CAP,
    timeout: float = TIMEOUT, env: dict | None = None, cwd=None, stdin: str | None = None,
    threads: int = 1,
) -> Run:
    """Run ``python -m graphpar *args`` (under ``mpiexec -n ranks`` when given), capped.

    ``threads`` sets ``GRAPHPAR_NUM_THREADS`` so that ranks times threads does
    not exceed the cores; waiting ranks sleep instead of spinning
    (``conftest.mpi_env``). A timeout fails the calling test with the output so far
    (``conftest.run_mpiexec``).
    """
    proc = run_mpiexec(ranks, ["-m", "graphpar", *args], timeout=timeout, env=env, cwd=cwd,
                       threads=threads, preexec_fn=limit_memory(cap), input=stdin)
    return Run(proc.returncode, proc.stdout, proc.stderr)


def assert_one_line_error(run: Run, *needles: str) -> str:
    """Assert a clean user error: non-zero exit, no traceback, the message once, naming needles.

    Returns the error line.
    """
    assert run.returncode != 0, run.output
    assert "Traceback" not in run.output, run.output
    lines = [ln for ln in run.stderr.splitlines() if ln.startswith("graphpar: error:")]
    assert len(lines) == 1, run.output
    for needle in needles:
        assert needle in lines[0], (needle, run.output)
    return lines[0]
