"""graphpar: parallel graph and survival workloads with Numba and MPI.

Public API (imported lazily, so ``import graphpar`` stays fast):

- Graphs: :class:`Graph`, :func:`validate_graph`, :func:`read_graph`,
  :func:`write_graph`, :mod:`graphpar.generate`.
- Shortest paths: :func:`sssp` (parallel delta-stepping; ``method="dijkstra"``
  is the serial reference; ``return_stats=True`` adds an :class:`SSSPStats`),
  :func:`verify_sssp`, :func:`default_delta`.
- GCN: :func:`gcn_normalize` (a :class:`GCNOperator`), :func:`aggregate`,
  :func:`reorder` (a :class:`ReorderedOperator`),
  :class:`GCN`, :func:`train_gcn` (a :class:`TrainResult`), :mod:`graphpar.datasets`.
- Survival: :class:`CoxPH` (its :class:`CoxSummary`, :class:`ConvergenceWarning`,
  :class:`MonotoneLikelihoodWarning`), :func:`concordance_index`.
- Threads: :func:`set_threads`, :func:`get_threads`.
- Distributed (mpi4py): :mod:`graphpar.mpi`.
"""

from __future__ import annotations

import importlib

__version__ = "0.1.0"

_LAZY = {
    "Graph": "graphpar._graph",
    "index_dtype": "graphpar._graph",
    "validate_graph": "graphpar._validation",
    "read_graph": "graphpar.io",
    "write_graph": "graphpar.io",
    "sssp": "graphpar._shortest_paths",
    "verify_sssp": "graphpar._shortest_paths",
    "default_delta": "graphpar._shortest_paths",
    "SSSPStats": "graphpar._shortest_paths",
    "gcn_normalize": "graphpar._gcn",
    "aggregate": "graphpar._gcn",
    "GCNOperator": "graphpar._gcn",
    "reorder": "graphpar._reorder",
    "ReorderedOperator": "graphpar._reorder",
    "GCN": "graphpar._gcn_model",
    "train_gcn": "graphpar._gcn_model",
    "TrainResult": "graphpar._gcn_model",
    "CoxPH": "graphpar._cox",
    "CoxSummary": "graphpar._cox",
    "ConvergenceWarning": "graphpar._cox",
    "MonotoneLikelihoodWarning": "graphpar._cox",
    "concordance_index": "graphpar._cox",
    "set_threads": "graphpar.threads",
    "get_threads": "graphpar.threads",
}
_SUBMODULES = ("generate", "datasets", "mpi", "io", "kernels", "csgraph", "plot", "progress")

__all__ = sorted(_LAZY) + list(_SUBMODULES)


def __getattr__(name: str):
    if name in _LAZY:
        value = getattr(importlib.import_module(_LAZY[name]), name)
        globals()[name] = value
        return value
    if name in _SUBMODULES:
        return importlib.import_module(f"graphpar.{name}")
    raise AttributeError(f"module 'graphpar' has no attribute {name!r}")


def __dir__():
    return __all__
