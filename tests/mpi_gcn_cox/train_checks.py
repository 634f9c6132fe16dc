"""Distributed GCN training equals the serial :func:`graphpar.train_gcn`, under mpiexec.

Cora (when the shared data is there) for every partitioner, and a small
generated graph with dense features where some ranks own no vertices.
"""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

import numpy as np
import scipy.sparse as sp
from _common import close

from graphpar.gcn_model import train_gcn
from graphpar.mpi.gcn import train_gcn_distributed

METHODS = ["block", "edge", "random"]
if importlib.util.find_spec("pymetis"):
    METHODS.append("metis")
if importlib.util.find_spec("mtkahypar"):
    METHODS.append("hypergraph")


def same_training(res, ref, what: str) -> int:
    close(res.model.W1, ref.model.W1, 1e-4, f"W1 {what}")
    close(res.model.W2, ref.model.W2, 1e-4, f"W2 {what}")
    close(res.history["loss"], ref.history["loss"], 1e-5, f"loss history {what}")
    close(res.history["val_loss"], ref.history["val_loss"], 1e-5, f"val loss history {what}")
    for key in ("train_accuracy", "val_accuracy", "test_accuracy", "epochs"):
        assert getattr(res, key) == getattr(ref, key), (what, key, getattr(res, key),
                                                        getattr(ref, key))
    return 8


def main(comm):
    checks = 0
    root = os.environ.get("GRAPHPAR_DATA")
    cora = Path(root) / "planetoid" if root else None
    if cora is not None and (cora / "ind.cora.graph").exists():
        from graphpar.datasets import load_planetoid

        data = load_planetoid("cora", root=cora)
        ref = train_gcn(data, seed=3, epochs=40)
        for method in METHODS:
            res = train_gcn_distributed(data, seed=3, epochs=40, method=method, comm=comm)
            checks += same_training(res, ref, f"cora {method}")
            assert res.halo_volume.total_rows == sum(res.halo_volume.recv_rows)
        res = train_gcn_distributed(data, seed=3, epochs=40, method="block", mode="p2p",
                                    early_stopping=None, comm=comm)
        checks += same_training(res, ref, "cora block p2p")
    elif os.environ.get("CI"):
        raise AssertionError("GRAPHPAR_DATA must point at the shared data sets in CI")
    # dense features, fewer vertices than ranks can own evenly, early stopping, float64
    rng = np.random.default_rng(5)
    n = 9
    a = sp.random_array((n, n), density=0.3, rng=rng)
    adj = sp.csr_array(((a + a.T) > 0).astype(np.float64))
    X = rng.random((n, 4))
    y = rng.integers(0, 3, n)
    tr = np.zeros(n, bool)
    tr[:5] = True
    va = ~tr
    kw = dict(hidden=6, epochs=30, seed=1, early_stopping=3, dtype=np.float64)
    ref = train_gcn(adj, X, y, tr, va, va, **kw)
    for method in ("block", "random"):
        res = train_gcn_distributed(adj, X, y, tr, va, va, method=method, comm=comm, **kw)
        checks += same_training(res, ref, f"small {method}")
    return checks
