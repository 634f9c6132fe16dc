"""Distributed-memory layer (mpi4py): the only part of graphpar that imports MPI.

Importing this package does not import mpi4py; the modules behind these names do:

- :class:`BlockPartition` (:mod:`graphpar.mpi.blocks`): contiguous vertex blocks
  (pure, no MPI); :mod:`graphpar.mpi.vertex_partitioners`: the vertex partitioners
  of the distributed GCN (block, edge, random, METIS, hypergraph; pure, no MPI).
- :func:`get_comm`, :func:`setup_threads` (threads per rank), :func:`abort_on_error`
  (:mod:`graphpar.mpi.comm`).
- :class:`DistGraph`, :func:`distribute_graph`.
- :func:`read_graph` (parallel reading of graph files) and :func:`read_table_rows`
  (each rank's rows of a survival table), in :mod:`graphpar.mpi.io`.
- :mod:`graphpar.mpi.generate`: ``kronecker``, ``uniform``, ``grid_road``
  generated in parallel.
- :func:`sssp` (distributed delta-stepping: the arguments and results of
  :func:`graphpar.sssp` on each rank's vertices) and :class:`SSSPMPIStats` (the
  ``mpi`` field of its :class:`graphpar.SSSPStats`).
- :func:`train_gcn` (:func:`graphpar.train_gcn` across the ranks; its
  :class:`graphpar.TrainResult` has ``mpi`` a :class:`GCNMPIStats`) and
  :func:`distribute_operator` (a :class:`DistOperator`: ``A @ H`` with a halo exchange);
  :func:`gcn_normalize` (the operator of a :class:`DistGraph`, from its local rows) and
  :func:`predict_rows`; :mod:`graphpar.mpi.features` reads each rank's rows of an ``.npy``.
- :class:`CoxPH` (:class:`graphpar.CoxPH` on rows spread across the ranks;
  ``mpi_stats_`` a :class:`CoxMPIStats`) and :func:`distribute_cox`.

The names above are available here, loaded on first use; ``graphpar.mpi.sssp``,
``graphpar.mpi.train_gcn`` and ``graphpar.mpi.CoxPH`` mirror ``graphpar.sssp``,
``graphpar.train_gcn`` and ``graphpar.CoxPH``. See docs/distributed.md.
"""

from __future__ import annotations

import importlib
import os

_LAZY = {
    "BlockPartition": "graphpar.mpi.blocks",
    "get_comm": "graphpar.mpi.comm",
    "setup_threads": "graphpar.mpi.comm",
    "abort_on_error": "graphpar.mpi.comm",
    "DistGraph": "graphpar.mpi._graph",
    "distribute_graph": "graphpar.mpi._graph",
    "read_graph": "graphpar.mpi.io",
    "read_table_rows": "graphpar.mpi.io",
    "sssp": "graphpar.mpi._sssp",
    "SSSPMPIStats": "graphpar.mpi._sssp",
    "CoxPH": "graphpar.mpi._cox",
    "CoxMPIStats": "graphpar.mpi._cox",
    "distribute_cox": "graphpar.mpi._cox",
    "train_gcn": "graphpar.mpi._gcn",
    "GCNMPIStats": "graphpar.mpi._gcn",
    "DistOperator": "graphpar.mpi._gcn",
    "distribute_operator": "graphpar.mpi._gcn",
    "gcn_normalize": "graphpar.mpi._gcn",
    "predict_rows": "graphpar.mpi._gcn",
}


def __getattr__(name: str):
    if name in _LAZY:
        value = getattr(importlib.import_module(_LAZY[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'graphpar.mpi' has no attribute {name!r}")

# Environment variables that MPI launchers set in every rank: MPICH/Hydra (PMI_*),
# Open MPI (OMPI_*), Slurm's srun (PMIX_*/SLURM_*) and Intel MPI (PMI_*).
_SIZE_VARS = ("PMI_SIZE", "OMPI_COMM_WORLD_SIZE", "PMIX_SIZE", "MPI_LOCALNRANKS")
_RANK_VARS = ("PMI_RANK", "OMPI_COMM_WORLD_RANK", "PMIX_RANK", "SLURM_PROCID")


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


def launcher_rank() -> int:
    """Return this process's rank in ``COMM_WORLD`` as the launcher set it (0 if unknown).

    Like :func:`launched_under_mpi` it reads only environment variables, so
    the CLI can silence duplicate messages of ranks other than 0 before MPI
    is initialised.

    Examples
    --------
    >>> launcher_rank() >= 0
    True
    """
    for var in _RANK_VARS:
        value = os.environ.get(var, "").strip()
        if value.isdigit():
            return int(value)
    return 0
