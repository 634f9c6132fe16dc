"""GCN training: the full-batch Adam loop shared by :meth:`graphpar.GCN.fit`,
:func:`graphpar.train_gcn` and the distributed :func:`graphpar.mpi.train_gcn`.

:func:`fit_loop` runs the epochs on a :class:`Learner` (a model bound to its data:
:class:`SerialLearner` here, the MPI layer's learner on a rank's rows), keeps the
history and applies early stopping; :func:`prepare_training` checks the inputs of
:func:`train_gcn` and its distributed twin.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

import numpy as np

from graphpar._gcn_checks import (
    check_labels,
    check_training_memory,
    count_classes,
    vertex_mask,
)
from graphpar._gcn_layers import network_input

if TYPE_CHECKING:
    from collections.abc import Sequence

    from graphpar._gcn_model import GCN
    from graphpar.mpi._gcn import GCNMPIStats

__all__ = ["Learner", "SerialLearner", "TrainResult", "accuracy", "adam_step", "fit_loop",
           "prepare_training", "train_gcn"]


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


def accuracy(pred, labels, mask) -> float:
    """The share of ``mask`` where ``pred`` equals ``labels`` (nan for an empty mask).

    Examples
    --------
    >>> accuracy(np.array([1, 0]), np.array([1, 1]), np.array([True, True]))
    0.5
    """
    return float(np.mean(pred[mask] == labels[mask])) if mask.any() else float("nan")


def prepare_training(
    who, adjacency, features, labels, train_mask, val_mask, test_mask, *, hidden, epochs, lr,
    dropout, weight_decay, early_stopping, normalize_features, seed, dtype, bias=False,
):
    """Check the training inputs; return the operator, features, labels, masks and model.

    Shared by :func:`train_gcn` and :func:`graphpar.mpi.train_gcn`; ``who``
    names the caller in errors and the other arguments are :func:`train_gcn`'s
    (``adjacency`` may be a Planetoid data set).

    Returns
    -------
    tuple
        ``(op, X, labels, train_mask, val_mask, test_mask, model)``: the
        normalised operator, the features as the network sees them
        (:meth:`GCN.prepare_features`), the checked labels, the boolean masks
        and a :class:`GCN` (with biases when ``bias``), freshly initialised.

    Examples
    --------
    >>> import numpy as np
    >>> out = prepare_training("f", np.ones((2, 2)), np.eye(2), np.array([0, 1]),
    ...                        np.ones(2, bool), None, None, hidden=4, epochs=1, lr=0.01,
    ...                        dropout=0.5, weight_decay=0.0, early_stopping=None,
    ...                        normalize_features=True, seed=0, dtype=np.float32)
    >>> out[-1].weights_[0].shape, out[4].tolist()
    ((2, 4), [False, False])
    """
    if features is None and hasattr(adjacency, "features"):
        data = adjacency
        adjacency, features, labels = data.adjacency, data.features, data.labels
        train_mask, val_mask, test_mask = data.train_mask, data.val_mask, data.test_mask
    if features is None or labels is None or train_mask is None:
        raise TypeError(f"{who} needs adjacency, features, labels and train_mask")
    from graphpar._gcn_model import GCN

    model = GCN(hidden=hidden, epochs=epochs, lr=lr, dropout=dropout, bias=bias,
                weight_decay=weight_decay, early_stopping=early_stopping,
                normalize_features=normalize_features, seed=seed, dtype=dtype)
    op = model.operator(adjacency)
    n = op.shape[0]
    labels = check_labels(labels, n, "labels")
    masks = {}
    for name, mask in (("train", train_mask), ("val", val_mask), ("test", test_mask)):
        masks[name] = (np.zeros(n, bool) if mask is None
                       else vertex_mask(mask, n, f"{name}_mask"))
    X = model._features(features, n, check_width=False, name="features")
    n_classes = count_classes(labels, masks)
    check_training_memory(model.dtype, model.hidden, n, X.shape[1], n_classes)
    model.init_weights(X.shape[1], n_classes)
    return op, X, labels, masks["train"], masks["val"], masks["test"], model


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

    :meth:`GCN.fit` and :func:`train_gcn` bind the whole graph;
    :func:`graphpar.mpi.train_gcn` binds this rank's rows and sums over the
    ranks, so that every method returns the same global figures on every rank.
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
             callback=None, progress: bool | None = False) -> TrainResult:
    """Full-batch Adam on ``learner``: the epoch loop, history and early stopping. Collective
    when ``learner`` is distributed.

    Parameters
    ----------
    learner : Learner
    epochs, lr, early_stopping, callback
        As in :func:`train_gcn` (already checked).
    progress : bool or None, default False
        Report the epochs (:func:`graphpar.progress.progress`), with the loss
        and validation accuracy.

    Returns
    -------
    TrainResult
        With ``mpi=None`` and ``seconds`` this process's wall time of the
        loop. The model's ``history_`` and ``n_epochs_`` are set too.

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
    from graphpar.progress import progress as progress_report

    model = learner.model
    m = [np.zeros_like(p) for p in model.params]
    v = [np.zeros_like(p) for p in model.params]
    hist = {"loss": [], "train_accuracy": [], "val_loss": [], "val_accuracy": []}
    has_val = learner.has_split("val")
    t0 = time.perf_counter()
    epoch = 0
    with progress_report(int(epochs), "training GCN", unit="epoch", enabled=progress) as bar:
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
            bar.set_postfix(f"loss {loss:.3f}" + (f" val acc {val_acc:.3f}" if has_val else ""))
            bar.update()
            if callback is not None:
                callback(epoch, rec)
            if (
                early_stopping is not None
                and epoch > early_stopping
                and hist["val_loss"][-1] > np.mean(hist["val_loss"][-(early_stopping + 1):-1])
            ):
                break
    seconds = time.perf_counter() - t0
    model.history_, model.n_epochs_ = hist, epoch
    train_acc, val_acc, test_acc = learner.accuracies()
    return TrainResult(model=model, history=hist, train_accuracy=train_acc,
                       val_accuracy=val_acc, test_accuracy=test_acc, epochs=epoch,
                       seconds=seconds)


class SerialLearner:
    """A :class:`GCN` bound to the whole graph: the :class:`Learner` of :meth:`GCN.fit`.

    Parameters
    ----------
    model : GCN
    op : GCNOperator
        The normalised adjacency.
    X : ndarray or scipy sparse
        The features as the network sees them (:meth:`GCN.prepare_features`).
    labels : ndarray of int
    masks : tuple of three boolean ndarrays
        The train, validation and test masks.
    weight_decay : float

    Examples
    --------
    >>> import numpy as np
    >>> from graphpar import gcn_normalize
    >>> masks = (np.ones(3, bool), np.zeros(3, bool), np.zeros(3, bool))
    >>> from graphpar import GCN
    >>> lr = SerialLearner(GCN(seed=0).init_weights(2, 2), gcn_normalize(np.eye(3)),
    ...                    np.ones((3, 2), np.float32), np.array([0, 1, 1]), masks, 0.0)
    >>> lr.has_split("train"), lr.has_split("val")
    (True, False)
    """

    def __init__(self, model: GCN, op, X, labels, masks, weight_decay: float):
        self.model, self.op, self.labels = model, op, labels
        self.X = network_input(X, model.dtype)
        self.masks = dict(zip(("train", "val", "test"), masks, strict=True))
        self.weight_decay = weight_decay

    def has_split(self, split: str) -> bool:
        return bool(self.masks[split].any())

    def loss_and_grad(self, split: str, rng):
        mask = self.masks[split]
        loss, grads, Z = self.model.loss_and_grad(
            self.op, self.X, self.labels, mask, weight_decay=self.weight_decay, rng=rng
        )
        return loss, accuracy(Z.argmax(axis=1), self.labels, mask), grads

    def accuracies(self):
        pred = self.model._logits(self.op, self.X).argmax(axis=1)
        return tuple(accuracy(pred, self.labels, self.masks[k]) for k in ("train", "val", "test"))


def train_gcn(
    adjacency,
    features=None,
    labels=None,
    train_mask=None,
    val_mask=None,
    test_mask=None,
    *,
    hidden: int | Sequence[int] = 16,
    epochs: int = 200,
    lr: float = 0.01,
    dropout: float = 0.5,
    weight_decay: float = 5e-4,
    early_stopping: int | None = None,
    normalize_features: bool = True,
    seed: int = 0,
    dtype=np.float32,
    callback=None,
    progress: bool | None = False,
    bias: bool = False,
) -> TrainResult:
    """Train Kipf and Welling's two-layer GCN (no biases) full batch, as their ``gcn/train.py``;
    or, with ``hidden=(64, 32)`` and ``bias=True``, any :class:`GCN`.

    The convenience wrapper around :class:`GCN`: the model is
    ``GCN(hidden=hidden, bias=bias, ...)`` and the result adds the test
    accuracy and the time. :func:`graphpar.mpi.train_gcn` takes the same
    arguments (plus the partition's) and trains the same model across MPI ranks.

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
    train_mask, val_mask, test_mask : ndarray, shape (n,)
        Boolean masks, or arrays of distinct vertex indices.
    hidden, epochs, lr, dropout, weight_decay : optional
        The paper's defaults: 16, 200, 0.01, 0.5, 5e-4 (decay on the first
        layer's weights only). ``hidden`` may be a sequence of widths, one
        per hidden layer, as :class:`GCN` takes it.
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
    progress : bool or None, default False
        Report the epochs (see :func:`graphpar.progress.progress`).
    bias : bool, default False
        Add a bias to every layer (the paper's model has none; :class:`GCN`
        has them by default).

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
        dtype=dtype, bias=bias,
    )
    model.progress = progress
    learner = SerialLearner(model, op, X, labels, (train_mask, val_mask, test_mask),
                            weight_decay)
    return fit_loop(learner, epochs=epochs, lr=lr, early_stopping=early_stopping,
                    callback=callback, progress=progress)
