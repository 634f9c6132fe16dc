"""Distributed GCN training from files equals the serial training, under mpiexec.

Usage: ``gcn_files_checks.py DIR`` where DIR holds data sets written by
``tests/test_dist_gcn_files.py`` (``<name>.<graph suffix>``, ``<name>.X.npy``,
``<name>.y.npy``, ``<name>.split.npz``). Each rank reads only its rows
(:func:`graphpar.mpi.read_graph`, :func:`graphpar.mpi.features.read_rows`) and
trains with :func:`graphpar.mpi.train_gcn` on the DistGraph, in float64, with
both row partitions; the serial reference, :func:`graphpar.train_gcn` on
:func:`graphpar.read_graph` of the same files, runs on every rank (test only).
Losses, weights and probabilities agree to 1e-10, accuracies and
predictions exactly.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import scipy.sparse as sp
from _common import close, run

import graphpar
import graphpar.mpi
from graphpar.mpi.features import read_rows

OPTS = dict(hidden=8, lr=0.01, dropout=0.5, weight_decay=5e-4, seed=3)


def datasets(folder: Path):
    for split in sorted(folder.glob("*.split.npz")):
        name = split.name[:-len(".split.npz")]
        graph = next(p for p in folder.iterdir()
                     if p.name.startswith(name + ".") and p.suffix in (".el", ".wel", ".gr",
                                                                        ".mtx"))
        yield name, graph, folder / f"{name}.X.npy", folder / f"{name}.y.npy", split


def serial_reference(graph, X, y, split, epochs, dtype, sparse, opts=OPTS):
    from graphpar.cli.gcn import read_split

    g = graphpar.read_graph(graph)
    Xf = np.load(X)
    if sparse:
        Xf = sp.csr_array(Xf)
    masks = read_split(str(split), g.shape[0])
    res = graphpar.train_gcn(g, Xf, np.load(y), masks["train"], masks["val"], masks["test"],
                             epochs=epochs, dtype=dtype, **opts)
    return g, Xf, masks, res


def check(comm, name, graph, X, y, split, method, dtype, sparse, opts=OPTS) -> int:
    from graphpar.cli.gcn import read_split

    what = (f"{name} {method} {np.dtype(dtype).name}{' sparse' if sparse else ''} "
            f"hidden={opts['hidden']} bias={opts.get('bias', False)}")
    epochs = 12
    g, Xf, masks, ref = serial_reference(graph, X, y, split, epochs, dtype, sparse, opts)
    dg = graphpar.mpi.read_graph(graph, weights="finite", comm=comm)
    if method == "edge":
        dg = dg.redistribute(dg.edge_balanced_partition())
    lo, hi, n = dg.lo, dg.hi, dg.gn
    Xl = read_rows(X, lo, hi, n)
    assert Xl.shape[0] == dg.ln and np.array_equal(Xl, np.load(X)[lo:hi]), what
    if sparse:
        Xl = sp.csr_array(Xl)
    yl = read_rows(y, lo, hi, n, ndim=1, what="labels", kinds="iu")
    ml = [m[lo:hi] for m in read_split(str(split), n).values()]
    res = graphpar.mpi.train_gcn(dg, Xl, yl, *ml, epochs=epochs, dtype=dtype, method=method,
                                 comm=comm, **opts)
    tol = 1e-10 if np.dtype(dtype) == np.float64 else 2e-5
    assert res.epochs == ref.epochs == epochs, what
    close(res.history["loss"], ref.history["loss"], tol, f"loss {what}")
    close(res.history["val_loss"], ref.history["val_loss"], tol, f"val loss {what}")
    assert len(res.model.params) == len(ref.model.params), what
    for W, Wref in zip(res.model.params, ref.model.params, strict=True):
        close(W, Wref, 1e2 * tol, f"weights {what}")
    checks = 4
    if np.dtype(dtype) == np.float64:
        for key in ("train_accuracy", "val_accuracy"):
            assert res.history[key] == ref.history[key], (what, key)
        for key in ("train_accuracy", "val_accuracy", "test_accuracy"):
            assert getattr(res, key) == getattr(ref, key), (what, key)
        pred = dg.gather_vertex_values(graphpar.mpi.predict_rows(res.model, dg, Xl), root=0)
        proba = graphpar.mpi.predict_rows(res.model, dg, Xl, proba=True)
        close(proba, ref.model.predict_proba(g, Xf)[lo:hi], 1e-10, f"proba {what}")
        if comm.Get_rank() == 0:
            assert np.array_equal(pred, ref.model.predict(g, Xf)), what
        checks += 4
    st = res.mpi
    assert st.ranks == comm.Get_size() and st.method == method, (what, st)
    # the operator built from the local rows equals the serial one's rows
    dop = graphpar.mpi.gcn_normalize(dg, dtype=np.float64)
    H = np.random.default_rng(0).random((n, 3))
    got = dop.gather_rows(dop.aggregate(np.ascontiguousarray(H[lo:hi])))
    op = graphpar.gcn_normalize(g, dtype=np.float64)
    assert np.array_equal(got, op @ H) or np.allclose(got, op @ H, rtol=1e-13, atol=0), what
    got_t = dop.gather_rows(dop.aggregate(np.ascontiguousarray(H[lo:hi]), transpose=True))
    assert np.allclose(got_t, op.T @ H, rtol=1e-13, atol=0), what
    return checks + 3


def errors(comm, folder: Path) -> int:
    """A bad feature row or mismatched file is one error, on every rank, naming it."""
    name, graph, X, y, split = next(datasets(folder))
    dg = graphpar.mpi.read_graph(graph, comm=comm)
    n = dg.gn
    bad = folder / "bad.X.npy"
    if comm.Get_rank() == 0:
        Xb = np.load(X)
        Xb[n - 1, 1] = np.nan
        np.save(bad, Xb)
        np.save(folder / "short.X.npy", Xb[:-1])
    comm.Barrier()
    Xl = read_rows(bad, dg.lo, dg.hi, n)
    yl = read_rows(y, dg.lo, dg.hi, n, ndim=1, what="labels", kinds="iu")
    train = yl >= 0  # the small data set marks unlabelled vertices -1
    try:
        graphpar.mpi.train_gcn(dg, Xl, yl, train, epochs=1, comm=comm)
    except ValueError as exc:
        assert str(exc) == f"features contains nan (row {n - 1}, column 1)", str(exc)
    else:
        raise AssertionError("nan feature accepted")
    try:
        read_rows(folder / "short.X.npy", dg.lo, dg.hi, n)
    except ValueError as exc:
        assert f"have {n - 1} rows but the graph has {n} vertices" in str(exc), str(exc)
    else:
        raise AssertionError("short features accepted")
    try:
        graphpar.mpi.train_gcn(dg, Xl, yl, train, epochs=1, method="metis", comm=comm)
    except ValueError as exc:
        assert "method must be one of block, edge" in str(exc), str(exc)
    else:
        raise AssertionError("metis accepted with a DistGraph")
    return 3


def main(comm, folder):
    folder = Path(folder)
    checks = 0
    for name, graph, X, y, split in datasets(folder):
        for method in ("block", "edge"):
            checks += check(comm, name, graph, X, y, split, method, np.float64, False)
        if name != "cora":
            checks += check(comm, name, graph, X, y, split, "edge", np.float64, True)
            checks += check(comm, name, graph, X, y, split, "block", np.float32, False)
            # any depth, with biases: the estimator's model, dense and sparse features
            deep = dict(OPTS, hidden=(8, 5), bias=True)
            checks += check(comm, name, graph, X, y, split, "edge", np.float64, False, deep)
            checks += check(comm, name, graph, X, y, split, "block", np.float64, True, deep)
    return checks + errors(comm, folder)


if __name__ == "__main__":
    run(main, sys.argv[1])
