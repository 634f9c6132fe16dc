"""Distributed-memory layer (mpi4py): the only part of graphpar that imports MPI.

Importing this package does not import mpi4py; its submodules do.
"""

from __future__ import annotations

import os

# Environment variables that MPI launchers set in every rank: MPICH/Hydra (PMI_*),
# Open MPI (OMPI_*), Slurm's srun (PMIX_*/SLURM_*) and Intel MPI (PMI_*).
_SIZE_VARS = ("PMI_SIZE", "OMPI_COMM_WORLD_SIZE", "PMIX_SIZE", "MPI_LOCALNRANKS")


def launched_under_mpi() -> bool:
    """Return True when this process was started by an MPI launcher (``mpiexec``).

    Reads only the launcher's environment variables, so it never imports or
    initialises MPI. A singleton run (``mpiexec -n 1``) counts as launched.

    Examples
    --------
    >>> isinstance(launched_under_mpi(), bool)
    True
    """
    return any(v in os.environ for v in _SIZE_VARS)
