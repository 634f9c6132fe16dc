"""Helpers for the scripts run under mpiexec: report failures and end the job on error."""

from __future__ import annotations

import sys
import traceback

from mpi4py import MPI


def run(main) -> None:
    """Run ``main(comm)``; on any exception print it with the rank and abort every rank."""
    comm = MPI.COMM_WORLD
    try:
        checks = main(comm)
    except BaseException:  # noqa: BLE001 - any failure must end the whole job
        print(f"rank {comm.Get_rank()} FAILED:\n{traceback.format_exc()}", file=sys.stderr,
              flush=True)
        comm.Abort(1)
        return
    total = comm.allreduce(checks)
    if comm.Get_rank() == 0:
        print(f"ALL OK: {total} checks on {comm.Get_size()} ranks", flush=True)


def close(got, ref, rel: float, what: str) -> None:
    """Assert max |got - ref| <= rel * max(|ref|, tiny), naming the check."""
    import numpy as np

    got = np.asarray(got, dtype=np.float64)
    ref = np.asarray(ref, dtype=np.float64)
    if got.shape != ref.shape:
        raise AssertionError(f"{what}: shape {got.shape} != {ref.shape}")
    if ref.size == 0:
        return
    scale = max(float(np.abs(ref).max()), 1e-300)
    err = float(np.abs(got - ref).max()) / scale
    if not err <= rel:
        raise AssertionError(f"{what}: relative error {err:.3g} > {rel:g}")
