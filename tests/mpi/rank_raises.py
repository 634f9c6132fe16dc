"""A job in which ranks fail, run under mpiexec by tests/test_dist_mpi.py,
tests/test_hostile_cli.py and tests/test_cli_sssp.py.

Unlike the other scripts of this folder it does not end its job through
``_common.run``: what it tests is how graphpar itself ends a job.

``python rank_raises.py MODE [KIND]``:

- ``library``: the last rank raises inside ``abort_on_error`` while the others
  wait in the distributed SSSP's collectives; the job must end at once.
- ``cli-one``: the CLI's distributed SSSP fails on the last rank only (a
  patched kernel driver); the CLI must print the message once and end the job.
- ``cli-all``: the CLI is given a missing file: every rank fails alike, rank 0
  prints the message once and every rank exits 2.
- ``cli-one KIND``: as ``cli-one``, with the error KIND (below) on the last rank
  while the others wait in a collective: one line, the job ends (status 2; 130
  for ``interrupt``).
- ``cli-agreed KIND``: the last rank raises KIND in a stage that every rank
  runs collectively (the CLI driver's ``Context.collectively``): every rank
  raises it, rank 0 prints it once and every rank exits 2.
- ``cli-faulty-symmetrisation PATH``: ``graphpar sssp PATH --undirected
  --verify --source 2`` with a symmetrisation that does nothing, so the
  search runs on the directed graph: the verifier, which checks the graph the
  user asked for, must report it (exit status 1).

KIND is ``memory`` (numpy's out-of-memory error, which cannot be rebuilt from
its message), ``eof`` (a truncated compressed stream), ``unicode`` (a
``UnicodeDecodeError``, five constructor arguments) or ``interrupt`` (Ctrl-C).
"""

from __future__ import annotations

import argparse
import sys

from graphpar.cli import main as cli_main
from graphpar.cli._driver import run_command
from graphpar.mpi import generate as dgen
from graphpar.mpi._sssp import sssp
from graphpar.mpi.comm import abort_on_error, get_comm

comm = get_comm()
LAST = comm.Get_size() - 1


def fail(kind):
    """Raise the error of ``kind`` as the code that meets it would."""
    if kind == "memory":
        import numpy as np

        np.ones(1 << 60, dtype=np.int8)  # numpy's _ArrayMemoryError(shape, dtype)
    if kind == "eof":
        raise EOFError("g.gr.gz: compressed file ended before the end-of-stream marker")
    if kind == "unicode":
        b"ok \xe9".decode("utf-8")
    if kind == "interrupt":
        raise KeyboardInterrupt
    raise SystemExit(f"unknown kind {kind}")


def main(mode, kind=None):
    if mode == "library":
        with abort_on_error():
            dg = dgen.grid_road(20, 20, seed=1)
            if comm.Get_rank() == LAST:
                raise ValueError(f"deliberate failure on rank {LAST}")
            sssp(dg, 0)
            comm.Barrier()
        return 0
    if mode == "cli-one":
        import graphpar.mpi._sssp as ds

        if comm.Get_rank() == LAST:
            def broken(*args, **kwargs):
                if kind is None:
                    raise ValueError(f"deliberate failure on rank {LAST}")
                fail(kind)

            ds._delta_stepping = broken
        return cli_main(["sssp", "--generate", "grid:20"])
    if mode == "cli-agreed":
        def job(args, ctx):
            ctx.collectively(lambda: fail(kind) if ctx.rank == LAST else None)
            return 0

        return run_command(argparse.Namespace(func=job, threads=None), under_mpi=True)
    if mode == "cli-faulty-symmetrisation":
        from graphpar.mpi._graph import DistGraph

        DistGraph.symmetrized = lambda self: self
        return cli_main(["sssp", kind, "--undirected", "--verify", "--source", "2"])
    if mode == "cli-all":
        return cli_main(["sssp", "/nonexistent/g.gr"])
    raise SystemExit(f"unknown mode {mode}")


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
