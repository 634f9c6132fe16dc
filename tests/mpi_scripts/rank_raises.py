"""A job in which ranks fail, run under mpiexec by tests/test_dist_mpi.py.

``python rank_raises.py MODE``:

- ``library``: the last rank raises inside ``abort_on_error`` while the others
  wait in the distributed SSSP's collectives; the job must end at once.
- ``cli-one``: the CLI's distributed SSSP fails on the last rank only (a
  patched kernel driver); the CLI must print the message once and end the job.
- ``cli-all``: the CLI is given a missing file: every rank fails alike, rank 0
  prints the message once and every rank exits 2.
"""

from __future__ import annotations

import argparse
import sys

from graphpar.cli._errors import run_reporting_errors
from graphpar.mpi import generate as dgen
from graphpar.mpi.comm import abort_on_error, get_comm
from graphpar.mpi.sssp import sssp

comm = get_comm()
LAST = comm.Get_size() - 1


def cli_args(path=None, generate=None):
    return argparse.Namespace(
        graph_file=path, generate=generate, source=0, delta=None, undirected=False,
        threads=None, output=None, verify=False, json=False,
    )


def main(mode):
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
                raise ValueError(f"deliberate failure on rank {LAST}")

            ds._delta_stepping = broken
        return run_reporting_errors(run_distributed, cli_args(generate="grid:20"))
    if mode == "cli-all":
        return run_reporting_errors(run_distributed, cli_args(path="/nonexistent/g.gr"))
    raise SystemExit(f"unknown mode {mode}")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
