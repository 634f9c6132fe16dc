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

import graphpar.mpi
from graphpar import train_gcn
from graphpar.mpi import GCNMPIStats
from graphpar.mpi.halo import plan_from_global, volume

METHODS = ["block", "edge", "random"]
if importlib.util.find_spec("pymetis"):
    METHODS.append("metis")
if importlib.util.find_spec("mtkahypar"):
    METHODS.append("hypergraph")


def same_training(res, ref, what: str) -> int:
    assert type(res) is type(ref) and ref.mpi is None, what
    close(res.model.weights_[0], ref.model.weights_[0], 1e-4, f"W1 {what}")
    close(res.model.weights_[1], ref.model.weights_[1], 1e-4, f"W2 {what}")
    assert sorted(res.history) == sorted(ref.history), what
    for key in ref.history:
        assert len(res.history[key]) == len(ref.history[key]) == res.epochs, (what, key)
    close(res.history["loss"], ref.history["loss"], 1e-5, f"loss history {what}")
    close(res.history["val_loss"], ref.history["val_loss"], 1e-5, f"val loss history {what}")
    for key in ("train_accuracy", "val_accuracy"):  # counts of equal predictions
        assert res.history[key] == ref.history[key], (what, key)
    for key in ("train_accuracy", "val_accuracy", "test_accuracy", "epochs"):
        assert getattr(res, key) == getattr(ref, key), (what, key, getattr(res, key),
                                                        getattr(ref, key))
    return 10


def same_stats(res, comm, method: str, op, mode=None) -> int:
    """``res.mpi`` against the partition recomputed here and the plans of the whole operator."""
    st = res.mpi
    assert isinstance(st, GCNMPIStats), type(st)
    assert st.ranks == comm.Get_size() and st.method == method
    assert st.mode in ("p2p", "allgather") and (mode is None or st.mode == mode)
    dop = graphpar.mpi.distribute_operator(op, method=method, comm=comm, mode=mode)
    plans = plan_from_global(dop.relabelling.permute_operator(op), dop.relabelling.offsets,
                             mode=mode)
    want = volume(plans, width=1, itemsize=res.model.dtype.itemsize)
    assert np.array_equal(st.halo.recv_rows, want.recv_rows), (st.halo, want)
    assert np.array_equal(st.halo.send_rows, want.send_rows), (st.halo, want)
    assert st.halo_rows == want.total_rows
    assert st.halo.itemsize == res.model.dtype.itemsize
    # per epoch the training pass exchanges hidden- then classes-wide rows forward and
    # again backward, the validation pass forward only; every halo row leaves one rank
    h, c = res.model.weights_[0].shape[1], res.model.weights_[1].shape[1]
    has_val = not np.isnan(res.history["val_loss"][0])
    passes = 3 if has_val else 2
    assert st.halo_bytes_per_epoch == want.total_rows * (h + c) * passes * st.halo.itemsize
    # one float64 Allreduce of both gradients, the loss and the correct count (+ validation)
    f = res.model.weights_[0].shape[0]
    assert st.allreduce_bytes_per_epoch == 8 * (f * h + h * c + 2) + (16 if has_val else 0)
    # every rank reports the same figures (the allreduce one is this rank's)
    assert comm.allgather(st.halo_bytes_per_epoch) == [st.halo_bytes_per_epoch] * st.ranks
    return 8


def main(comm):
    checks = 0
    root = os.environ.get("GRAPHPAR_DATA")
    cora = Path(root) / "planetoid" if root else None
    if cora is not None and (cora / "ind.cora.graph").exists():
        from graphpar.datasets import load_planetoid

        data = load_planetoid("cora", root=cora)
        ref = train_gcn(data, seed=3, epochs=40)
        op = graphpar.gcn_normalize(data.adjacency)
        for method in METHODS:
            res = graphpar.mpi.train_gcn(data, seed=3, epochs=40, method=method, comm=comm)
            checks += same_training(res, ref, f"cora {method}")
            checks += same_stats(res, comm, method, op)
        res = graphpar.mpi.train_gcn(data, seed=3, epochs=40, method="block", mode="p2p",
                                     early_stopping=None, comm=comm)
        checks += same_training(res, ref, "cora block p2p")
        checks += same_stats(res, comm, "block", op, mode="p2p")
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
    op = graphpar.gcn_normalize(adj)
    for method in ("block", "random"):
        res = graphpar.mpi.train_gcn(adj, X, y, tr, va, va, method=method, comm=comm, **kw)
        checks += same_training(res, ref, f"small {method}")
        checks += same_stats(res, comm, method, op)
    # the same keywords as the serial trainer, in either order, and the same callback records
    seen = []
    res = graphpar.mpi.train_gcn(adj, X, y, tr, va, va, method="block", comm=comm,
                                 callback=lambda e, rec: seen.append((e, rec)), **kw)
    assert [e for e, _ in seen] == list(range(1, res.epochs + 1))
    assert [rec["loss"] for _, rec in seen] == res.history["loss"]
    checks += 2
    # a bad argument raises the same error on every rank (no hang)
    try:
        graphpar.mpi.train_gcn(adj, X, y, tr, va, va, method="nope", comm=comm, **kw)
    except ValueError as exc:
        assert "method must be one of" in str(exc), exc
        checks += 1
    else:
        raise AssertionError("no ValueError for method='nope'")
    return checks
