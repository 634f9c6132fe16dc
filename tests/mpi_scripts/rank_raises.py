"""A job in which ranks fail, run under mpiexec by tests/test_dist_mpi.py and
tests/test_hostile_cli.py.

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
  runs through ``run_collectively``: every rank raises it, rank 0 prints it
  once and every rank exits 2.
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

from graphpar.cli._errors import run_reporting_errors
from graphpar.mpi import generate as dgen
from graphpar.mpi.comm import abort_on_error, get_comm, run_collectively
from graphpar.mpi.sssp import sssp

comm = get_comm()
LAST = comm.Get_size() - 1


def cli_args(path=None, generate=None):
    return argparse.Namespace(
        graph_file=path, generate=generate, source=0, delta=None, undirected=False,
        threads=None, output=None, verify=False, json=False,
    )


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
    from graphpar.mpi.cli_sssp import run_distributed

    if mode == "library":
        with abort_on_error():
            dg = dgen.grid_road(20, 20, seed=1)
            if comm.Get_rank() == LAST:
                raise ValueError(f"deliberate failure on rank {LAST}")
            sssp(dg, 0)
            comm.Barrier()
        return 0
    if mode == "cli-one":
        import graphpar.mpi.sssp as ds

        if comm.Get_rank() == LAST:
            def broken(*args, **kwargs):
                if kind is None:
                    raise ValueError(f"deliberate failure on rank {LAST}")
                fail(kind)

            ds._delta_stepping = broken
        return run_reporting_errors(run_distributed, cli_args(generate="grid:20"))
    if mode == "cli-agreed":
        def job(args):
            run_collectively(lambda: fail(kind) if comm.Get_rank() == LAST else None, comm)
            return 0

        return run_reporting_errors(job, None)
    if mode == "cli-faulty-symmetrisation":
        from graphpar.mpi.graph import DistGraph

        DistGraph.symmetrized = lambda self: self
        args = cli_args(path=kind)
        args.undirected, args.verify, args.source = True, True, 2
        return run_reporting_errors(run_distributed, args)
    if mode == "cli-all":
        return run_reporting_errors(run_distributed, cli_args(path="/nonexistent/g.gr"))
    raise SystemExit(f"unknown mode {mode}")


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
