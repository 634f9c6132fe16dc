"""The GCN estimator: any depth, biases, masks as indices, raw features, save and load.

References: a dense NumPy forward written out here, central finite differences for
the gradients, :func:`graphpar.train_gcn` (the paper's model) for the training loop,
and Kipf and Welling's Cora accuracy.
"""

from __future__ import annotations

import subprocess
import sys
import types

import numpy as np
import pytest
import scipy.sparse as sp
from test_gcn_model import numeric_grad, planted

from graphpar import GCN, gcn_normalize, train_gcn


def dense_forward(op, X, weights, biases, layers=None):
    """The network written out with dense NumPy arrays (no dropout)."""
    H = X
    L = len(weights) if layers is None else layers
    for i in range(L):
        Z = op @ (H @ weights[i])
        if biases is not None:
            Z = Z + biases[i]
        H = np.maximum(Z, 0) if i < len(weights) - 1 else Z
    return H


@pytest.mark.parametrize("hidden", [(), (7,), (9, 5), (6, 6, 4)])
@pytest.mark.parametrize("bias", [False, True])
def test_forward_and_embeddings_match_dense(hidden, bias):
    rng = np.random.default_rng(0)
    A, X, *_ = planted(rng, n_per=10)
    op = gcn_normalize(A, dtype=np.float64).toarray()
    model = GCN(hidden=hidden, bias=bias, normalize_features=False, seed=1,
                dtype=np.float64).init_weights(X.shape[1], 3)
    if bias:  # zero at initialisation: give them values so that they count
        for b in model.biases_:
            b[:] = rng.normal(size=b.shape)
    W, b = model.weights_, model.biases_
    assert [w.shape for w in W] == list(zip((20, *hidden), (*hidden, 3), strict=True))
    ref = dense_forward(op, X, W, b)
    np.testing.assert_allclose(model.logits(A, X), ref, rtol=1e-11, atol=1e-12)
    np.testing.assert_allclose(model.logits(A, sp.csr_array(X)), ref, rtol=1e-11, atol=1e-12)
    for layer in range(1, model.n_layers + 1):
        np.testing.assert_allclose(model.embed(A, X, layer=layer),
                                   dense_forward(op, X, W, b, layer), rtol=1e-11, atol=1e-12)
    if hidden:
        np.testing.assert_array_equal(model.embed(A, X), model.embed(A, X, layer=len(hidden)))
    p = model.predict_proba(A, X)
    e = np.exp(ref - ref.max(axis=1, keepdims=True))
    np.testing.assert_allclose(p, e / e.sum(axis=1, keepdims=True), rtol=1e-10)
    np.testing.assert_array_equal(model.predict(A, X), ref.argmax(axis=1))


@pytest.mark.parametrize("hidden, bias, sparse_x", [
    ((), True, False), ((5, 4), True, False), ((5, 4), True, True), ((6,), True, True),
    ((4, 3, 3), False, False),
])
def test_gradients_any_depth_finite_differences(hidden, bias, sparse_x):
    rng = np.random.default_rng(1)
    A, X, labels, train, _, _ = planted(rng, n_per=8, f=6)
    A = np.triu(A) * rng.uniform(0.5, 2.0, A.shape)  # directed and weighted: op.T matters
    op = gcn_normalize(A, dtype=np.float64)
    Xin = sp.csr_array(X) if sparse_x else X
    model = GCN(hidden=hidden, bias=bias, dropout=0.3, seed=2,
                dtype=np.float64).init_weights(X.shape[1], 3)
    if bias:
        for b in model.biases_:
            b[:] = rng.normal(scale=0.3, size=b.shape)

    def loss_grads():
        return model.loss_and_grad(op, Xin, labels, train, weight_decay=5e-3,
                                   rng=np.random.default_rng(7))

    _, grads, _ = loss_grads()
    assert len(grads) == len(model.params) == model.n_layers * (2 if bias else 1)
    for P, g in zip(model.params, grads, strict=True):
        assert g.shape == P.shape
        num = numeric_grad(lambda: loss_grads()[0], P, np.arange(P.size))
        np.testing.assert_allclose(g.ravel(), num, rtol=1e-5, atol=1e-8)


def test_fit_is_what_train_gcn_trains():
    """train_gcn is the wrapper: GCN(hidden=(h,), bias=False) gives the same training."""
    rng = np.random.default_rng(2)
    A, X, y, tr, va, te = planted(rng)
    ref = train_gcn(A, X, y, tr, va, te, hidden=8, epochs=40, seed=4)
    model = GCN(hidden=(8,), bias=False, epochs=40, seed=4).fit(A, X, y, train=tr, val=va)
    assert model.history_ == ref.history and model.n_epochs_ == 40
    for W, R in zip(model.weights_, ref.model.weights_, strict=True):
        np.testing.assert_array_equal(W, R)
    # the raw features go in: the model scales them as training did
    pred = model.predict(A, X)
    assert np.mean(pred[te] == y[te]) == ref.test_accuracy
    assert np.mean(pred[va] == y[va]) == ref.val_accuracy


def test_a_bad_graph_is_named_as_fit_names_it():
    with pytest.raises(TypeError, match=r"^graph must be a Graph \(graphpar.Graph\), a scipy "
                                        r"sparse matrix or array, or a dense array, got str"):
        GCN(epochs=1).fit("abc", np.ones((2, 2)), [0, 1])
    with pytest.raises(ValueError, match=r"^graph has an infinite edge weight: edge \(0, 1, inf\)"):
        GCN(epochs=1).fit(sp.csr_array(np.array([[0, np.inf], [1, 0]])), np.ones((2, 2)),
                          [0, 1])


def test_a_class_only_in_test_adds_no_output_and_is_named():
    """GCN.fit, train_gcn and the CLI count the classes of train and val alone: the held-out
    labels must not change the model (they did in train_gcn: 51 outputs, other weights)."""
    rng = np.random.default_rng(2)
    A, X, y, tr, va, te = planted(rng)
    y = y.copy()
    v = int(np.flatnonzero(te)[3])
    y[v] = 50
    with pytest.warns(UserWarning, match=rf"1 test vertices have a label no train or val "
                                         rf"vertex has \(the first: label 50 at vertex {v}; "
                                         r"the classes are 0\.\.2\)"):
        ref = train_gcn(A, X, y, tr, va, te, hidden=8, epochs=20, seed=4)
    model = GCN(hidden=(8,), bias=False, epochs=20, seed=4).fit(A, X, y, train=tr, val=va)
    assert ref.model.n_classes_ == model.n_classes_ == 3
    for W, R in zip(model.weights_, ref.model.weights_, strict=True):
        np.testing.assert_array_equal(W, R)
    assert ref.test_accuracy == np.mean(model.predict(A, X)[te] == y[te])


def test_overlapping_masks_are_named():
    rng = np.random.default_rng(2)
    A, X, y, tr, va, te = planted(rng)
    first = int(np.flatnonzero(tr)[0])
    with pytest.warns(UserWarning, match=rf"the train and val masks share {int(tr.sum())} "
                                         rf"vertices \(the first: vertex {first}\)"):
        GCN(epochs=2).fit(A, X, y, train=tr, val=va | tr)


def test_a_huge_label_is_named_in_the_memory_refusal():
    from graphpar.errors import LimitError

    rng = np.random.default_rng(2)
    A, X, y, tr, va, te = planted(rng)
    y = y.copy()
    y[np.flatnonzero(tr)[0]] = 10**9
    with pytest.raises(LimitError, match=r"and 1000000001 classes \(one more than the "
                                         r"largest train or val label\)"):
        GCN(epochs=2).fit(A, X, y, train=tr, val=va)


def test_index_masks_equal_boolean_masks_and_float_inputs():
    rng = np.random.default_rng(3)
    A, X, y, tr, va, _ = planted(rng)
    a = GCN(epochs=15, seed=1).fit(A, X, y, train=tr, val=va)
    b = GCN(epochs=15, seed=1).fit(sp.csr_array(A), X, list(y),
                                    train=np.flatnonzero(tr)[::-1].copy(),
                                    val=np.flatnonzero(va).astype(np.int32))
    assert a.history_ == b.history_
    c = GCN(epochs=15, seed=1).fit(A.tolist(), X.astype(np.float32).tolist(), y, tr, va)
    np.testing.assert_allclose(c.history_["loss"], a.history_["loss"], rtol=1e-5)
    np.testing.assert_array_equal(a.predict(A, X), b.predict(A, X))


def test_operator_input_used_as_is():
    rng = np.random.default_rng(3)
    A, X, y, tr, va, _ = planted(rng, n_per=10)
    a = GCN(epochs=5, seed=1).fit(A, X, y, train=tr)
    op = gcn_normalize(A, dtype=np.float64)  # another dtype: converted, not renormalised
    b = GCN(epochs=5, seed=1).fit(op, X, y, train=tr)
    np.testing.assert_allclose(b.history_["loss"], a.history_["loss"], rtol=1e-6)
    np.testing.assert_allclose(b.logits(op, X), a.logits(A, X), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("hidden, lr", [((), 0.1), ((32, 16), 0.01)])
def test_any_depth_learns_the_planted_classes(hidden, lr):
    rng = np.random.default_rng(4)
    A, X, y, tr, va, te = planted(rng)
    model = GCN(hidden=hidden, epochs=200, lr=lr, seed=0).fit(A, X, y, tr, va)
    assert model.history_["loss"][-1] < 0.75 * model.history_["loss"][0]
    assert np.mean(model.predict(A, X)[te] == y[te]) > 0.85  # chance is 1/3


def test_unlabelled_vertices_outside_the_masks():
    rng = np.random.default_rng(5)
    A, X, y, tr, va, te = planted(rng, n_per=10)
    y = np.where(tr | va, y, -1)
    model = GCN(epochs=3).fit(A, X, y, train=tr, val=va)
    assert model.n_classes_ == 3 and model.predict(A, X).shape == (30,)


def test_default_train_is_every_vertex_and_early_stopping():
    rng = np.random.default_rng(6)
    A, X, y, tr, va, _ = planted(rng, n_per=10)
    model = GCN(epochs=4).fit(A, X, y)
    assert model.n_epochs_ == 4 and np.isnan(model.history_["val_loss"]).all()
    model = GCN(epochs=400, lr=0.05, early_stopping=5, seed=0).fit(A, X, y, tr, va)
    vl = model.history_["val_loss"]
    assert model.n_epochs_ == len(vl) < 400
    assert vl[-1] > np.mean(vl[-6:-1])


def test_progress_reports_epochs(capsys, monkeypatch):
    monkeypatch.setenv("GRAPHPAR_PROGRESS_INTERVAL", "0")  # a line at once, not after 5 s
    rng = np.random.default_rng(6)
    A, X, y, tr, va, _ = planted(rng, n_per=5)
    GCN(epochs=3, progress=True).fit(A, X, y, tr, va)
    err = capsys.readouterr().err
    assert "training GCN: 100%" in err and "3/3" in err and "\r" not in err
    GCN(epochs=3).fit(A, X, y, tr, va)
    assert capsys.readouterr().err == ""


def test_save_and_load_round_trip(tmp_path):
    rng = np.random.default_rng(7)
    A, X, y, tr, va, _ = planted(rng)
    for kw in ({"hidden": (12, 6), "dtype": np.float64}, {"hidden": (), "bias": False},
               {"hidden": 5, "normalize_features": False, "seed": 2**70}):
        model = GCN(epochs=10, **kw).fit(A, sp.csr_array(X), y, tr, va)
        path = tmp_path / "model.npz"
        model.save(path)
        assert [p.name for p in tmp_path.iterdir()] == ["model.npz"]  # no temporary left
        with np.load(path, allow_pickle=False) as npz:  # nothing pickled
            layers = model.n_layers
            want = {"config"} | {f"weight_{i}" for i in range(layers)}
            if model.bias:
                want |= {f"bias_{i}" for i in range(layers)}
            assert set(npz.files) == want  # weights and configuration only
        loaded = GCN.load(path)
        assert loaded.get_config() == model.get_config()
        assert loaded.dtype == model.dtype and loaded.n_classes_ == 3
        for W, R in zip(loaded.params, model.params, strict=True):
            np.testing.assert_array_equal(W, R)
            assert W.dtype == model.dtype and W.flags.writeable
        np.testing.assert_array_equal(loaded.logits(A, X), model.logits(A, X))
        # a loaded model trains again as a fresh one would
        again = GCN.load(path).fit(A, X, y, tr, va)
        assert again.history_ == GCN(epochs=10, **kw).fit(A, X, y, tr, va).history_


def test_save_holds_no_inputs_however_large(tmp_path):
    rng = np.random.default_rng(8)
    n, f = 3000, 400
    A = sp.random_array((n, n), density=0.002, rng=rng, format="csr")
    X = rng.random((n, f))
    y = rng.integers(0, 4, n)
    model = GCN(hidden=(8,), epochs=2).fit(A + A.T, X, y, train=np.arange(100))
    model.save(tmp_path / "m.npz")
    weights = 4 * (f * 8 + 8 + 8 * 4 + 4)
    assert (tmp_path / "m.npz").stat().st_size < weights + 4096  # X alone is 9.6 MB


class _FakeTensor:
    """Quacks like a torch tensor for the conversion path (torch is not installed here)."""

    def __init__(self, arr):
        self.arr = np.asarray(arr)
        self.layout = "strided"

    def detach(self):
        return self

    def cpu(self):
        return self

    def numpy(self):
        return self.arr


def test_torch_tensors_converted(monkeypatch):
    fake = types.ModuleType("torch")
    fake.Tensor = _FakeTensor
    fake.strided = "strided"
    monkeypatch.setitem(sys.modules, "torch", fake)
    rng = np.random.default_rng(9)
    A, X, y, tr, va, _ = planted(rng, n_per=10)
    a = GCN(epochs=5).fit(A, X, y, tr, va)
    b = GCN(epochs=5).fit(_FakeTensor(A), _FakeTensor(X), _FakeTensor(y), _FakeTensor(tr),
                          _FakeTensor(np.flatnonzero(va)))
    assert a.history_ == b.history_
    np.testing.assert_array_equal(b.predict(_FakeTensor(A), _FakeTensor(X)), a.predict(A, X))


def test_torch_never_imported():
    code = ("import sys, numpy as np, graphpar\n"
            "A = np.ones((4, 4)) - np.eye(4)\n"
            "m = graphpar.GCN(epochs=2).fit(A, np.eye(4), [0, 0, 1, 1])\n"
            "m.predict(A, np.eye(4))\n"
            "print('torch' in sys.modules)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=600)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "False"


def test_cora_accuracy_of_the_default_model(planetoid_dir):
    from graphpar.datasets import load_planetoid

    d = load_planetoid("cora", root=planetoid_dir, download=False)
    model = GCN(hidden=(16,), seed=0).fit(d.adjacency, d.features, d.labels,
                                         train=d.train_mask, val=np.flatnonzero(d.val_mask))
    acc = np.mean(model.predict(d.adjacency, d.features)[d.test_mask] == d.labels[d.test_mask])
    # Kipf and Welling report 81.5%; one seed varies by about a point
    assert acc > 0.79


BAD = [
    ({"hidden": (16, 0)}, ValueError, r"hidden\[1\] must be a positive integer, got 0"),
    ({"hidden": "16"}, ValueError, "hidden must be a positive integer"),
    ({"bias": 1}, ValueError, "bias must be True or False, got 1"),
    ({"dtype": np.int32}, TypeError, "dtype must be numpy.float32 or numpy.float64"),
    ({"lr": -1}, ValueError, "lr must be a finite number > 0"),
    ({"progress": "yes"}, ValueError, "progress must be True, False or None"),
]


@pytest.mark.parametrize("kw, exc, match", BAD)
def test_bad_hyperparameters(kw, exc, match):
    with pytest.raises(exc, match=match):
        GCN(**kw)


def test_bad_inputs_named():
    rng = np.random.default_rng(10)
    A, X, y, tr, va, _ = planted(rng, n_per=5)
    m = GCN(epochs=2)
    with pytest.raises(ValueError, match="no weights yet"):
        m.predict(A, X)
    with pytest.raises(ValueError, match="X has 14 rows but the graph has 15 vertices"):
        m.fit(A, X[:14], y, tr)
    with pytest.raises(ValueError, match=r"y must have shape \(15,\)"):
        m.fit(A, X, y[:3], tr)
    with pytest.raises(ValueError, match="y must be integers"):
        m.fit(A, X, y.astype(float), tr)
    with pytest.raises(ValueError, match=r"train lists vertex 15 \(position 1\), outside"):
        m.fit(A, X, y, train=[0, 15])
    with pytest.raises(ValueError, match=r"val lists vertex -1"):
        m.fit(A, X, y, tr, val=[-1])
    with pytest.raises(ValueError, match=r"train must have shape \(15,\) as a boolean mask"):
        m.fit(A, X, y, train=tr[:4])
    with pytest.raises(ValueError, match="train lists vertex 2 twice"):
        m.fit(A, X, y, train=[2, 3, 2])
    with pytest.raises(ValueError, match="train selects no vertices"):
        m.fit(A, X, y, train=np.zeros(15, bool))
    bad = y.copy()
    bad[4] = -1
    with pytest.raises(ValueError, match=r"labels under the val mask must be >= 0 "
                                         r"\(class 0, 1, ...\), got -1 at vertex 4"):
        m.fit(A, X, bad, train=[0, 1], val=[4, 5])
    X2 = X.copy()
    X2[3, 4] = np.nan
    with pytest.raises(ValueError, match=r"X contains nan \(row 3, column 4\)"):
        m.fit(A, X2, y, tr)
    m.fit(A, X, y, tr)
    with pytest.raises(ValueError, match="X has 19 features .* expects 20"):
        m.predict(A, X[:, 1:])
    with pytest.raises(ValueError, match=r"layer must be an integer in \[1, 2\]"):
        m.embed(A, X, layer=3)
    with pytest.raises(ValueError, match="no hidden layer"):
        GCN(hidden=()).init_weights(3, 2).embed(np.eye(2), np.ones((2, 3)))


def test_fit_accepts_a_pyg_edge_index_like_the_graph_it_describes():
    rng = np.random.default_rng(3)
    n, e = 30, 90
    edge_index = rng.integers(0, n - 1, size=(2, e))  # vertex n-1 isolated: n from X
    X = rng.random((n, 5))
    y = rng.integers(0, 3, size=n)
    from graphpar import Graph

    g = Graph.from_edge_index(edge_index, num_nodes=n)
    a = GCN(epochs=15, seed=1, dtype=np.float64).fit(edge_index, X, y)
    b = GCN(epochs=15, seed=1, dtype=np.float64).fit(g, X, y)
    np.testing.assert_array_equal(a.predict_proba(edge_index, X), b.predict_proba(g, X))
    assert a.operator(edge_index, n).shape == (n, n)
    # a (2, 2) integer array on a 2-vertex graph is an adjacency matrix, as before
    A = np.array([[0, 1], [1, 0]])
    np.testing.assert_allclose(GCN(dtype=np.float64).operator(A, 2).toarray(), 0.5)
