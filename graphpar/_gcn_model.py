"""A two-layer graph convolutional network (Kipf and Welling, ICLR 2017), NumPy and Numba only.

``logits = op @ (dropout(relu(op @ (dropout(X) @ W1))) @ W2)`` with ``op`` the
normalised adjacency from :func:`graphpar.gcn_normalize`. The forward and the
hand-written backward run every sparse product through
:func:`graphpar.aggregate`'s kernel; training is full batch with Adam,
softmax cross-entropy on the training vertices and L2 weight decay on the
first layer, as in the paper's ``gcn`` code. One training loop
(:func:`fit_loop`) serves :func:`train_gcn` and the distributed
:func:`graphpar.mpi.train_gcn`.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

import numpy as np
import scipy.sparse as sp

from graphpar._gcn import SERIAL_WORK, aggregate, gcn_normalize
from graphpar.kernels import aggregate as _kernel
from graphpar.limits import check_memory

if TYPE_CHECKING:
    from graphpar.mpi._gcn import GCNMPIStats

__all__ = [
    "GCN", "Learner", "SerialLearner", "TrainResult", "adam_step", "check_training_options",
    "fit_loop", "prepare_training", "train_gcn",
]

_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))


# ------------------------------------------------------------------ option checks
def _integer(value, name: str, lowest: int) -> int:
    ok = isinstance(value, int | np.integer | float | np.floating) and not isinstance(value, bool)
    if ok and isinstance(value, float | np.floating):
        ok = math.isfinite(value) and float(value).is_integer()
    if not ok or value < lowest:
        kind = "a positive integer" if lowest == 1 else "a non-negative integer"
        raise ValueError(f"{name} must be {kind}, got {value!r}")
    return int(value)


def _real(value, name: str, lo: float, hi: float | None, *, lo_open: bool, text: str) -> float:
    try:
        x = float(value)
    except (TypeError, ValueError):
        x = math.nan
    if isinstance(value, bool) or not math.isfinite(x) or x < lo or (lo_open and x == lo) or (
        hi is not None and x >= hi
    ):
        raise ValueError(f"{name} must be {text}, got {value!r}")
    return x


_CHECKS = {
    "hidden": lambda v, n: _integer(v, n, 1),
    "epochs": lambda v, n: _integer(v, n, 1),
    "early_stopping": lambda v, n: None if v is None else _integer(v, n, 1),
    # numpy's generators take any non-negative integer and refuse negative ones
    "seed": lambda v, n: _integer(v, n, 0),
    "lr": lambda v, n: _real(v, n, 0.0, None, lo_open=True, text="a finite number > 0"),
    "dropout": lambda v, n: _real(v, n, 0.0, 1.0, lo_open=False, text="in [0, 1)"),
    "weight_decay": lambda v, n: _real(
        v, n, 0.0, None, lo_open=False, text="a finite number >= 0"
    ),
}


def check_training_options(names: dict[str, str] | None = None, **options) -> dict:
    """Check GCN training options; return them converted (int or float), else raise ValueError.

    Parameters
    ----------
    names : dict, optional
        How the caller spells each option in errors (the command line passes
        ``{"lr": "--lr", ...}``); default: the parameter names.
    **options
        Any of ``hidden``, ``epochs``, ``early_stopping`` (positive integers;
        ``early_stopping`` may be None), ``seed`` (a non-negative integer, as
        numpy's generators require), ``lr`` (finite, > 0), ``dropout`` (in
        [0, 1)) and ``weight_decay`` (finite, >= 0).

    Raises
    ------
    ValueError
        Naming the first bad option and its value.

    Examples
    --------
    >>> check_training_options(hidden=16, lr=0.01)
    {'hidden': 16, 'lr': 0.01}
    >>> check_training_options({"seed": "--seed"}, seed=-1)
    Traceback (most recent call last):
    ...
    ValueError: --seed must be a non-negative integer, got -1
    """
    names = names or {}
    out = {}
    for key, value in options.items():
        if key not in _CHECKS:
            raise TypeError(f"unknown training option {key!r}")
        out[key] = _CHECKS[key](value, names.get(key, key))
    return out


class _SparseInput:
    """Sparse features with a fixed transpose permutation, so that dropout on the
    stored entries and ``X.T @ G`` need no per-epoch transpose."""

    def __init__(self, X: sp.csr_array, dtype: np.dtype):
        X = sp.csr_array(X)
        X.sum_duplicates()
        self.shape = X.shape
        self.indptr = X.indptr.astype(np.int64)
        self.indices = X.indices.astype(np.int32 if X.shape[1] < 2**31 else np.int64)
        self.data = X.data.astype(dtype)
        # The CSR of X.T whose k-th stored entry is X's entry perm[k].
        order = sp.csr_array(
            (np.arange(X.nnz, dtype=np.float64), X.indices, X.indptr), shape=X.shape
        ).T.tocsr()
        order.sort_indices()
        self.t_indptr = order.indptr.astype(np.int64)
        self.t_indices = order.indices.astype(np.int32 if X.shape[0] < 2**31 else np.int64)
        self.perm = order.data.astype(np.int64)

    @staticmethod
    def _spmm(indptr, indices, data, H, out):
        if (indices.size + out.shape[0]) * max(out.shape[1], 1) < SERIAL_WORK:
            _kernel.spmm_rows(indptr, indices, data, H, out, 0, out.shape[0])
        else:
            _kernel.spmm(indptr, indices, data, H, out)

    def matmul(self, data, W, out):
        self._spmm(self.indptr, self.indices, data, W, out)

    def rmatmul_t(self, data, G, out):
        """``out = X.T @ G`` for the values ``data`` (in X's order)."""
        self._spmm(self.t_indptr, self.t_indices, data[self.perm], G, out)


class GCN:
    """A two-layer GCN: ``op @ relu(op @ X W1) W2`` with dropout, without biases.

    Parameters
    ----------
    n_features, n_classes : int
        Input width and number of classes.
    hidden : int, default 16
        Hidden width.
    dropout : float, default 0.5
        Dropout rate on the input features (their stored entries, for sparse
        features) and on the hidden layer, in training only.
    seed : int, default 0
        Seeds the Glorot-uniform initialisation and, through :attr:`rng`,
        the dropout masks; the same seed gives the same model and training.
    dtype : {numpy.float32, numpy.float64}, default numpy.float32
        Dtype of the weights and of all computation.

    Attributes
    ----------
    W1 : ndarray, shape (n_features, hidden)
    W2 : ndarray, shape (hidden, n_classes)
    rng : numpy.random.Generator
        The generator the dropout masks come from.

    Examples
    --------
    >>> import numpy as np
    >>> from graphpar import gcn_normalize
    >>> op = gcn_normalize(np.ones((3, 3)) - np.eye(3))
    >>> model = GCN(4, 2, hidden=5, seed=0)
    >>> model.predict(op, np.eye(3, 4, dtype=np.float32)).shape
    (3,)
    """

    def __init__(
        self,
        n_features: int,
        n_classes: int,
        *,
        hidden: int = 16,
        dropout: float = 0.5,
        seed: int = 0,
        dtype=np.float32,
    ):
        n_features = _integer(n_features, "n_features", 1)
        n_classes = _integer(n_classes, "n_classes", 1)
        opts = check_training_options(hidden=hidden, dropout=dropout, seed=seed)
        hidden = opts["hidden"]
        self.dtype = np.dtype(dtype)
        if self.dtype not in _FLOATS:
            raise TypeError(f"dtype must be numpy.float32 or numpy.float64, got {self.dtype}")
        # the weights, drawn in float64 first
        check_memory(
            (8 + self.dtype.itemsize) * hidden * (n_features + n_classes),
            what=f"the weights of a GCN with {n_features} features, hidden={hidden} and "
            f"{n_classes} classes",
        )
        self.dropout = opts["dropout"]
        self.rng = np.random.default_rng(opts["seed"])
        self.W1 = self._glorot(n_features, hidden)
        self.W2 = self._glorot(hidden, n_classes)
        self._inputs: dict = {}

    def _glorot(self, fan_in: int, fan_out: int) -> np.ndarray:
        r = np.sqrt(6.0 / (fan_in + fan_out))
        return self.rng.uniform(-r, r, (fan_in, fan_out)).astype(self.dtype)

    @property
    def params(self) -> list[np.ndarray]:
        """The weights ``[W1, W2]`` (the arrays themselves, updated in place by training)."""
        return [self.W1, self.W2]

    # ---------------------------------------------------------------- forward
    def _prepare(self, X):
        key = id(X)
        hit = self._inputs.get(key)
        if hit is not None and hit[0] is X:
            return hit[1]
        if sp.issparse(X):
            prepared = _SparseInput(X, self.dtype)
        else:
            prepared = np.ascontiguousarray(X, dtype=self.dtype)
        if prepared.shape[1] != self.W1.shape[0]:
            raise ValueError(
                f"X has {prepared.shape[1]} features but the model expects {self.W1.shape[0]}"
            )
        self._inputs = {key: (X, prepared)}  # keep one: the training features
        return prepared

    def _forward(self, op, X, rng):
        """Logits and what the backward needs; dropout from ``rng`` when given."""
        Xp = self._prepare(X)
        keep = 1.0 - self.dropout
        train = rng is not None and self.dropout > 0
        n = op.shape[0]
        S1 = np.empty((Xp.shape[0], self.W1.shape[1]), dtype=self.dtype)
        if isinstance(Xp, _SparseInput):
            xdata = Xp.data
            if train:
                xdata = xdata * (rng.random(xdata.size) < keep).astype(self.dtype) / keep
                xdata = xdata.astype(self.dtype, copy=False)
            Xp.matmul(xdata, self.W1, S1)
            xd = xdata
        else:
            xd = Xp
            if train:
                xd = (Xp * (rng.random(Xp.shape) < keep) / keep).astype(self.dtype)
            np.matmul(xd, self.W1, out=S1)
        Z1 = aggregate(op, S1)
        H1 = np.maximum(Z1, 0)
        m2 = None
        if train:
            m2 = ((rng.random(H1.shape) < keep) / keep).astype(self.dtype)
            H1 = H1 * m2
        Z2 = aggregate(op, H1 @ self.W2)
        if Z2.shape[0] != n:
            raise ValueError("op and X disagree on the number of vertices")
        return Z2, (Xp, xd, Z1, H1, m2)

    def logits(self, op, X) -> np.ndarray:
        """Class scores (before softmax) in evaluation mode (no dropout).

        Examples
        --------
        >>> import numpy as np
        >>> from graphpar import gcn_normalize
        >>> GCN(2, 3, seed=1).logits(gcn_normalize(np.eye(4)), np.ones((4, 2))).shape
        (4, 3)
        """
        return self._forward(op, X, None)[0]

    def predict(self, op, X) -> np.ndarray:
        """Predicted class of every vertex (evaluation mode).

        Examples
        --------
        >>> import numpy as np
        >>> from graphpar import gcn_normalize
        >>> GCN(2, 3, seed=1).predict(gcn_normalize(np.eye(4)), np.ones((4, 2))).dtype
        dtype('int64')
        """
        return self.logits(op, X).argmax(axis=1).astype(np.int64)

    # ---------------------------------------------------------------- loss
    def loss_and_grad(self, op, X, labels, mask, *, weight_decay: float = 0.0, rng=None):
        """Masked mean softmax cross-entropy plus ``weight_decay * |W1|^2 / 2``, and its gradient.

        Parameters
        ----------
        op : GCNOperator or scipy sparse, shape (n, n)
            The normalised adjacency.
        X : ndarray or scipy sparse, shape (n, n_features)
        labels : ndarray of int, shape (n,)
        mask : ndarray of bool, shape (n,)
            Vertices whose loss counts.
        weight_decay : float
            L2 penalty on ``W1`` (the paper's: 5e-4).
        rng : numpy.random.Generator, optional
            Draw dropout masks from it (training mode); ``None``: no dropout.

        Returns
        -------
        loss : float
        grads : list of ndarray
            Gradients for ``[W1, W2]``.
        logits : ndarray, shape (n, n_classes)

        Examples
        --------
        >>> import numpy as np
        >>> from graphpar import gcn_normalize
        >>> m = GCN(2, 2, seed=0, dtype=np.float64)
        >>> loss, grads, _ = m.loss_and_grad(gcn_normalize(np.eye(3)), np.ones((3, 2)),
        ...                                  np.array([0, 1, 1]), np.ones(3, bool))
        >>> [g.shape for g in grads]
        [(2, 16), (16, 2)]
        """
        Z2, (Xp, xd, Z1, H1, m2) = self._forward(op, X, rng)
        idx = np.flatnonzero(mask)
        if idx.size == 0:
            raise ValueError("mask selects no vertices")
        y = np.asarray(labels)[idx]
        C = Z2.shape[1]
        if y.min() < 0 or y.max() >= C:
            raise ValueError(f"labels under the mask must be in [0, {C}), got {y.min()}..{y.max()}")
        z = Z2[idx].astype(np.float64)
        z -= z.max(axis=1, keepdims=True)
        logp = z - np.log(np.exp(z).sum(axis=1, keepdims=True))
        loss = -logp[np.arange(idx.size), y].mean()
        loss += 0.5 * weight_decay * float(np.sum(self.W1.astype(np.float64) ** 2))
        G2 = np.zeros_like(Z2)
        P = np.exp(logp)
        P[np.arange(idx.size), y] -= 1.0
        G2[idx] = (P / idx.size).astype(self.dtype)
        # Z2 = op @ (H1 W2)
        dS2 = aggregate(op, G2, transpose=True)
        gW2 = H1.T @ dS2
        dH1 = dS2 @ self.W2.T
        if m2 is not None:
            dH1 *= m2
        dZ1 = dH1 * (Z1 > 0)
        # Z1 = op @ (Xd W1)
        dS1 = aggregate(op, dZ1, transpose=True)
        gW1 = np.empty_like(self.W1)
        if isinstance(Xp, _SparseInput):
            Xp.rmatmul_t(xd, dS1, gW1)
        else:
            np.matmul(xd.T, dS1, out=gW1)
        if weight_decay:
            gW1 += self.dtype.type(weight_decay) * self.W1
        return float(loss), [gW1, gW2], Z2


# -------------------------------------------------------------------- training
@dataclass
class TrainResult:
    """What :func:`train_gcn` and :func:`graphpar.mpi.train_gcn` return.

    Attributes
    ----------
    model : GCN
        The trained model.
    history : dict of list of float
        Per epoch: ``loss`` and ``train_accuracy`` (training mode, with
        dropout, as the paper's code reports them), ``val_loss`` and
        ``val_accuracy`` (evaluation mode).
    train_accuracy, val_accuracy, test_accuracy : float
        Final accuracies in evaluation mode.
    epochs : int
        Epochs run (fewer than asked when early stopping triggered).
    seconds : float
        Wall time of the training loop (under MPI: the slowest rank's).
    mpi : graphpar.mpi._gcn.GCNMPIStats or None
        The distribution figures (ranks, partition, halo and gradient
        traffic) of :func:`graphpar.mpi.train_gcn`; None for serial training.

    Examples
    --------
    >>> import numpy as np
    >>> A = np.ones((4, 4)) - np.eye(4)
    >>> r = train_gcn(A, np.eye(4), np.array([0, 0, 1, 1]), np.ones(4, bool), epochs=3)
    >>> r.epochs, sorted(r.history), r.mpi
    (3, ['loss', 'train_accuracy', 'val_accuracy', 'val_loss'], None)
    """

    model: GCN
    history: dict = field(default_factory=dict)
    train_accuracy: float = 0.0
    val_accuracy: float = 0.0
    test_accuracy: float = 0.0
    epochs: int = 0
    seconds: float = 0.0
    mpi: GCNMPIStats | None = None


def _row_normalize(X, dtype):
    if sp.issparse(X):
        X = sp.csr_array(X, dtype=np.float64)
        s = np.asarray(X.sum(axis=1)).ravel()
    else:
        X = np.asarray(X, dtype=np.float64)
        if X.ndim != 2:
            raise ValueError(f"features must be 2-D, got shape {X.shape}")
        s = X.sum(axis=1)
    inv = np.zeros_like(s)
    nz = s != 0
    inv[nz] = 1.0 / s[nz]
    if sp.issparse(X):
        return sp.csr_array(sp.diags_array(inv) @ X, dtype=dtype)
    return (X * inv[:, None]).astype(dtype)


def _check_mask(mask, n, name):
    m = np.asarray(mask)
    if m.dtype != bool or m.shape != (n,):
        raise ValueError(f"{name} must be a boolean array of shape ({n},), got {m.dtype} {m.shape}")
    return m


def _accuracy(pred, labels, mask) -> float:
    return float(np.mean(pred[mask] == labels[mask])) if mask.any() else float("nan")


def prepare_training(
    who, adjacency, features, labels, train_mask, val_mask, test_mask, *, hidden, epochs, lr,
    dropout, weight_decay, early_stopping, normalize_features, seed, dtype,
):
    """Check the training inputs; return the operator, features, labels, masks and model.

    Shared by :func:`train_gcn` and :func:`graphpar.mpi.train_gcn`; ``who``
    names the caller in errors and the other arguments are :func:`train_gcn`'s
    (``adjacency`` may be a Planetoid data set).

    Returns
    -------
    tuple
        ``(op, X, labels, train_mask, val_mask, test_mask, model)``: the
        normalised operator, the (row-normalised) features in ``dtype``, the
        checked labels and masks and a freshly initialised :class:`GCN`.

    Examples
    --------
    >>> import numpy as np
    >>> out = prepare_training("f", np.ones((2, 2)), np.eye(2), np.array([0, 1]),
    ...                        np.ones(2, bool), None, None, hidden=4, epochs=1, lr=0.01,
    ...                        dropout=0.5, weight_decay=0.0, early_stopping=None,
    ...                        normalize_features=True, seed=0, dtype=np.float32)
    >>> out[-1].W1.shape, out[4].tolist()
    ((2, 4), [False, False])
    """
    if features is None and hasattr(adjacency, "features"):
        data = adjacency
        adjacency, features, labels = data.adjacency, data.features, data.labels
        train_mask, val_mask, test_mask = data.train_mask, data.val_mask, data.test_mask
    if features is None or labels is None or train_mask is None:
        raise TypeError(f"{who} needs adjacency, features, labels and train_mask")
    check_training_options(
        hidden=hidden, epochs=epochs, lr=lr, dropout=dropout, weight_decay=weight_decay,
        early_stopping=early_stopping, seed=seed,
    )
    dtype = np.dtype(dtype)
    op = gcn_normalize(adjacency, dtype=dtype)
    n = op.shape[0]
    labels = np.asarray(labels)
    if labels.shape != (n,) or labels.dtype.kind not in "iu":
        raise ValueError(
            f"labels must be integers of shape ({n},), got {labels.dtype} {labels.shape}"
        )
    train_mask = _check_mask(train_mask, n, "train_mask")
    val_mask = _check_mask(val_mask if val_mask is not None else np.zeros(n, bool), n, "val_mask")
    test_mask = _check_mask(
        test_mask if test_mask is not None else np.zeros(n, bool), n, "test_mask"
    )
    if features.shape[0] != n:
        raise ValueError(f"features have {features.shape[0]} rows but the graph has {n} vertices")
    X = _row_normalize(features, dtype) if normalize_features else (
        sp.csr_array(features, dtype=dtype) if sp.issparse(features)
        else np.asarray(features, dtype=dtype)
    )
    n_classes = int(labels[train_mask | val_mask | test_mask].max()) + 1
    # about ten hidden-wide arrays per vertex (activations, masks, gradients) and
    # four per feature (weights, gradient, Adam's two moments)
    check_memory(
        dtype.itemsize * int(hidden) * (10 * n + 4 * (X.shape[1] + n_classes)),
        what=f"training a GCN with hidden={int(hidden)} on {n} vertices and "
        f"{X.shape[1]} features",
    )
    model = GCN(X.shape[1], n_classes, hidden=hidden, dropout=dropout, seed=seed, dtype=dtype)
    return op, X, labels, train_mask, val_mask, test_mask, model


def adam_step(params, grads, m, v, epoch: int, lr: float,
              b1: float = 0.9, b2: float = 0.999, eps: float = 1e-8) -> None:
    """One Adam update in TensorFlow's form, in place on ``params``, ``m`` and ``v``.

    Examples
    --------
    >>> import numpy as np
    >>> p, g = [np.ones(2)], [np.ones(2)]
    >>> m, v = [np.zeros(2)], [np.zeros(2)]
    >>> adam_step(p, g, m, v, 1, 0.1)
    >>> p[0].round(6)
    array([0.9, 0.9])
    """
    lr_t = lr * np.sqrt(1 - b2**epoch) / (1 - b1**epoch)
    for p, g, mi, vi in zip(params, grads, m, v, strict=True):
        mi *= b1
        mi += (1 - b1) * g
        vi *= b2
        vi += (1 - b2) * g * g
        p -= (lr_t * mi / (np.sqrt(vi) + eps)).astype(p.dtype)


class Learner(Protocol):
    """What :func:`fit_loop` trains: a :class:`GCN` bound to its data.

    :func:`train_gcn` binds the whole graph; :func:`graphpar.mpi.train_gcn`
    binds this rank's rows and sums over the ranks, so that every method
    returns the same global figures on every rank.
    """

    model: GCN

    def loss_and_grad(self, split: str, rng) -> tuple[float, float, list | None]:
        """``(loss, accuracy, grads)`` on ``split`` ("train" or "val"); grads only for "train".

        ``rng`` draws the dropout masks (training mode); None: evaluation mode.
        """

    def has_split(self, split: str) -> bool:
        """Whether the mask of ``split`` ("train", "val", "test") selects any vertex."""

    def accuracies(self) -> tuple[float, float, float]:
        """Train, validation and test accuracy of the current model in evaluation mode."""


def fit_loop(learner: Learner, *, epochs: int, lr: float, early_stopping: int | None = None,
             callback=None) -> TrainResult:
    """Full-batch Adam on ``learner``: the epoch loop, history and early stopping. Collective
    when ``learner`` is distributed.

    Parameters
    ----------
    learner : Learner
    epochs, lr, early_stopping, callback
        As in :func:`train_gcn` (already checked).

    Returns
    -------
    TrainResult
        With ``mpi=None`` and ``seconds`` this process's wall time of the loop.

    Examples
    --------
    >>> import numpy as np
    >>> A = np.ones((4, 4)) - np.eye(4)
    >>> op, X, y, tr, va, te, model = prepare_training(
    ...     "f", A, np.eye(4), np.array([0, 0, 1, 1]), np.ones(4, bool), None, None,
    ...     hidden=4, epochs=2, lr=0.01, dropout=0.5, weight_decay=0.0,
    ...     early_stopping=None, normalize_features=True, seed=0, dtype=np.float32)
    >>> fit_loop(SerialLearner(model, op, X, y, (tr, va, te), 0.0), epochs=2, lr=0.01).epochs
    2
    """
    model = learner.model
    m = [np.zeros_like(p) for p in model.params]
    v = [np.zeros_like(p) for p in model.params]
    hist = {"loss": [], "train_accuracy": [], "val_loss": [], "val_accuracy": []}
    has_val = learner.has_split("val")
    t0 = time.perf_counter()
    epoch = 0
    for epoch in range(1, int(epochs) + 1):
        loss, train_acc, grads = learner.loss_and_grad("train", model.rng)
        adam_step(model.params, grads, m, v, epoch, lr)
        if has_val:
            val_loss, val_acc, _ = learner.loss_and_grad("val", None)
        else:
            val_loss, val_acc = float("nan"), float("nan")
        rec = {"loss": loss, "train_accuracy": train_acc, "val_loss": val_loss,
               "val_accuracy": val_acc}
        for k, val in rec.items():
            hist[k].append(val)
        if callback is not None:
            callback(epoch, rec)
        if (
            early_stopping is not None
            and epoch > early_stopping
            and hist["val_loss"][-1] > np.mean(hist["val_loss"][-(early_stopping + 1):-1])
        ):
            break
    seconds = time.perf_counter() - t0
    train_acc, val_acc, test_acc = learner.accuracies()
    return TrainResult(model=model, history=hist, train_accuracy=train_acc,
                       val_accuracy=val_acc, test_accuracy=test_acc, epochs=epoch,
                       seconds=seconds)


class SerialLearner:
    """A :class:`GCN` bound to the whole graph: the :class:`Learner` of :func:`train_gcn`.

    Parameters
    ----------
    model : GCN
    op : GCNOperator
        The normalised adjacency.
    X : ndarray or scipy sparse
        The features, in the model's dtype.
    labels : ndarray of int
    masks : tuple of three boolean ndarrays
        The train, validation and test masks.
    weight_decay : float

    Examples
    --------
    >>> import numpy as np
    >>> from graphpar import gcn_normalize
    >>> masks = (np.ones(3, bool), np.zeros(3, bool), np.zeros(3, bool))
    >>> lr = SerialLearner(GCN(2, 2, seed=0), gcn_normalize(np.eye(3)),
    ...                    np.ones((3, 2), np.float32), np.array([0, 1, 1]), masks, 0.0)
    >>> lr.has_split("train"), lr.has_split("val")
    (True, False)
    """

    def __init__(self, model: GCN, op, X, labels, masks, weight_decay: float):
        self.model, self.op, self.X, self.labels = model, op, X, labels
        self.masks = dict(zip(("train", "val", "test"), masks, strict=True))
        self.weight_decay = weight_decay

    def has_split(self, split: str) -> bool:
        return bool(self.masks[split].any())

    def loss_and_grad(self, split: str, rng):
        mask = self.masks[split]
        loss, grads, Z = self.model.loss_and_grad(
            self.op, self.X, self.labels, mask, weight_decay=self.weight_decay, rng=rng
        )
        return loss, _accuracy(Z.argmax(axis=1), self.labels, mask), grads

    def accuracies(self):
        pred = self.model.predict(self.op, self.X)
        return tuple(_accuracy(pred, self.labels, self.masks[k]) for k in ("train", "val", "test"))


def train_gcn(
    adjacency,
    features=None,
    labels=None,
    train_mask=None,
    val_mask=None,
    test_mask=None,
    *,
    hidden: int = 16,
    epochs: int = 200,
    lr: float = 0.01,
    dropout: float = 0.5,
    weight_decay: float = 5e-4,
    early_stopping: int | None = None,
    normalize_features: bool = True,
    seed: int = 0,
    dtype=np.float32,
    callback=None,
) -> TrainResult:
    """Train a two-layer GCN full batch, as Kipf and Welling's ``gcn/train.py`` does.

    :func:`graphpar.mpi.train_gcn` takes the same arguments (plus the
    partition's) and trains the same model across MPI ranks.

    Parameters
    ----------
    adjacency : graph or Planetoid
        Anything :func:`graphpar.gcn_normalize` accepts; it is normalised here
        (``D^-1/2 (A+I) D^-1/2``). Or a :class:`graphpar.datasets.Planetoid`,
        which then supplies all six inputs.
    features : ndarray or scipy sparse, shape (n, f)
        Vertex features; rows are scaled to sum 1 when ``normalize_features``.
    labels : ndarray of int, shape (n,)
        Classes ``0..C-1`` (other values only outside the masks).
    train_mask, val_mask, test_mask : ndarray of bool, shape (n,)
    hidden, epochs, lr, dropout, weight_decay : optional
        The paper's defaults: 16, 200, 0.01, 0.5, 5e-4 (decay on ``W1`` only).
    early_stopping : int, optional
        Stop when the validation loss exceeds the mean of the previous
        ``early_stopping`` epochs (the paper's code uses 10). Default: off.
    normalize_features : bool, default True
    seed : int, default 0
        Seeds the initialisation and the dropout masks: same seed, same result.
    dtype : {numpy.float32, numpy.float64}, default numpy.float32
    callback : callable, optional
        Called as ``callback(epoch, record)`` after each epoch with that
        epoch's history entries.

    Returns
    -------
    TrainResult
        The model, the history and the final train, validation and test
        accuracy; ``mpi`` is None.

    Examples
    --------
    >>> from graphpar.datasets import load_planetoid
    >>> result = train_gcn(load_planetoid("cora"), seed=0)  # doctest: +SKIP
    >>> round(result.test_accuracy, 2)  # doctest: +SKIP
    0.81
    """
    op, X, labels, train_mask, val_mask, test_mask, model = prepare_training(
        "train_gcn", adjacency, features, labels, train_mask, val_mask, test_mask,
        hidden=hidden, epochs=epochs, lr=lr, dropout=dropout, weight_decay=weight_decay,
        early_stopping=early_stopping, normalize_features=normalize_features, seed=seed,
        dtype=dtype,
    )
    learner = SerialLearner(model, op, X, labels, (train_mask, val_mask, test_mask),
                            weight_decay)
    return fit_loop(learner, epochs=epochs, lr=lr, early_stopping=early_stopping,
                    callback=callback)
