"""Graph convolutional networks (Kipf and Welling, ICLR 2017), NumPy and Numba only:
the estimator :class:`GCN`.

Layer ``l`` of a :class:`GCN` computes ``Z_l = op @ (dropout(H_l) @ W_l) + b_l`` with
``H_0 = X`` (the features, row-normalised by default), ``H_{l+1} = relu(Z_l)`` and the
last ``Z`` the class scores; ``op`` is the normalised adjacency from
:func:`graphpar.gcn_normalize`. The work is split by job: ``_gcn_checks`` (options and
inputs), ``_gcn_layers`` (the forward, backward and loss, which every sparse product
runs through :func:`graphpar.aggregate`'s kernel), ``_gcn_train`` (the training loop
shared by :meth:`GCN.fit`, :func:`train_gcn` and the distributed
:func:`graphpar.mpi.train_gcn`: full batch, Adam, softmax cross-entropy on the training
vertices and L2 weight decay on the first layer's weights, as in the paper's ``gcn``
code) and ``_gcn_io`` (model files).
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import pairwise

import numpy as np
import scipy.sparse as sp

from graphpar._gcn import GCNOperator, aggregate, as_operator, gcn_normalize
from graphpar._gcn_checks import (
    FLOATS,
    check_features,
    check_labels,
    check_training_memory,
    check_training_options,
    count_classes,
    from_torch,
    integer_option,
    is_edge_index,
    rows_of,
    vertex_mask,
)
from graphpar._gcn_io import load_model, save_model
from graphpar._gcn_layers import (
    backward,
    cross_entropy,
    forward,
    network_input,
    row_normalize,
    softmax_rows,
)
from graphpar._validation import validate_graph
from graphpar.limits import check_memory

__all__ = ["GCN", "Learner", "SerialLearner", "TrainResult", "adam_step", "fit_loop",
           "prepare_training", "train_gcn"]


class GCN:
    """A graph convolutional network of any depth: an estimator with fit, predict and save.

    Each layer computes ``op @ (dropout(H) @ W) + b`` with ``op`` the normalised
    adjacency ``D^-1/2 (A+I) D^-1/2``; a ReLU follows every layer but the last,
    whose outputs are the class scores. Training (:meth:`fit`) is full batch
    with Adam on the softmax cross-entropy of the training vertices plus
    ``weight_decay * |W_0|^2 / 2`` (the first layer's weights), as in Kipf and
    Welling's ``gcn`` code.

    Parameters
    ----------
    hidden : int or sequence of int, default (16,)
        Widths of the hidden layers: ``(16,)`` is the paper's two-layer model,
        ``()`` one layer (a linear model on the propagated features), ``(64, 32)``
        three layers.
    dropout : float, default 0.5
        Dropout rate on every layer's input (the stored entries of sparse
        features), in training only.
    lr : float, default 0.01
        Adam's learning rate.
    weight_decay : float, default 5e-4
        L2 penalty on the first layer's weights.
    epochs : int, default 200
        Training epochs (at most, with ``early_stopping``).
    bias : bool, default True
        Add a bias to every layer (initialised to zero).
    early_stopping : int, optional
        Stop when the validation loss exceeds the mean of the previous
        ``early_stopping`` epochs (the paper's code uses 10). Default: off.
    normalize_features : bool, default True
        Scale every feature row to sum 1 (rows of zeros stay zero). This is
        part of the model: :meth:`predict` and the other methods take raw
        features and scale them the same way.
    seed : int, default 0
        Seeds the Glorot-uniform initialisation and the dropout masks: the
        same seed gives the same model.
    dtype : {numpy.float32, numpy.float64}, default numpy.float32
        Dtype of the weights and of all computation.
    progress : bool or None, default False
        Report the epochs while fitting (:func:`graphpar.progress.progress`;
        ``None``: when the ``"graphpar"`` logger has an INFO handler).

    Attributes
    ----------
    weights_ : list of ndarray
        ``weights_[l]`` has shape ``(width of layer l's input, width of its output)``.
    biases_ : list of ndarray or None
        One per layer; None when ``bias=False``.
    n_features_in_, n_classes_ : int
        Input width and number of classes (labels ``0 .. n_classes_ - 1``).
    history_ : dict of list of float
        Per epoch of the last :meth:`fit`: ``loss`` and ``train_accuracy``
        (training mode, with dropout, as the paper's code reports them),
        ``val_loss`` and ``val_accuracy`` (evaluation mode; nan without ``val``).
    n_epochs_ : int
        Epochs the last :meth:`fit` ran.
    rng : numpy.random.Generator
        The generator the dropout masks come from.

    Examples
    --------
    >>> import numpy as np
    >>> A = np.ones((4, 4)) - np.eye(4)
    >>> X, y = np.eye(4), np.array([0, 0, 1, 1])
    >>> model = GCN(hidden=(8,), epochs=50, seed=0).fit(A, X, y, train=[0, 2])
    >>> model.predict(A, X).shape, len(model.history_["loss"])
    ((4,), 50)
    >>> model.embed(A, X).shape  # the hidden layer's output
    (4, 8)
    """

    def __init__(
        self,
        hidden: int | Sequence[int] = (16,),
        dropout: float = 0.5,
        lr: float = 0.01,
        weight_decay: float = 5e-4,
        epochs: int = 200,
        bias: bool = True,
        early_stopping: int | None = None,
        normalize_features: bool = True,
        seed: int = 0,
        dtype=np.float32,
        progress: bool | None = False,
    ):
        opts = check_training_options(
            hidden=hidden, dropout=dropout, lr=lr, weight_decay=weight_decay, epochs=epochs,
            bias=bias, early_stopping=early_stopping, normalize_features=normalize_features,
            seed=seed,
        )
        h = opts["hidden"]
        self.hidden: tuple[int, ...] = h if isinstance(h, tuple) else (h,)
        self.dropout: float = opts["dropout"]
        self.lr: float = opts["lr"]
        self.weight_decay: float = opts["weight_decay"]
        self.epochs: int = opts["epochs"]
        self.bias: bool = opts["bias"]
        self.early_stopping: int | None = opts["early_stopping"]
        self.normalize_features: bool = opts["normalize_features"]
        self.seed: int = opts["seed"]
        try:
            self.dtype = np.dtype(dtype)
        except TypeError:
            self.dtype = None
        if self.dtype not in FLOATS:
            raise TypeError(f"dtype must be numpy.float32 or numpy.float64, got {dtype!r}")
        if progress is not None and not isinstance(progress, bool | np.bool_):
            raise ValueError(f"progress must be True, False or None, got {progress!r}")
        self.progress = progress
        self.rng = np.random.default_rng(self.seed)
        self.weights_: list[np.ndarray] | None = None
        self.biases_: list[np.ndarray] | None = None
        self.history_: dict | None = None
        self.n_epochs_ = 0

    def __repr__(self) -> str:
        cfg = self.get_config()
        body = ", ".join(f"{k}={v!r}" for k, v in cfg.items() if k != "dtype")
        return f"GCN({body}, dtype=numpy.{self.dtype.name})"

    def get_config(self) -> dict:
        """The hyperparameters, as :class:`GCN` takes them (without ``progress``).

        Examples
        --------
        >>> GCN(hidden=(64, 32)).get_config()["hidden"]
        (64, 32)
        """
        return {"hidden": self.hidden, "dropout": self.dropout, "lr": self.lr,
                "weight_decay": self.weight_decay, "epochs": self.epochs, "bias": self.bias,
                "early_stopping": self.early_stopping,
                "normalize_features": self.normalize_features, "seed": self.seed,
                "dtype": self.dtype.name}

    # ---------------------------------------------------------------- weights
    @property
    def n_layers(self) -> int:
        """Number of graph-convolution layers: ``len(hidden) + 1``."""
        return len(self.hidden) + 1

    @property
    def fitted(self) -> bool:
        """Whether the model has weights (from :meth:`fit`, :meth:`init_weights`, :meth:`load`)."""
        return self.weights_ is not None

    @property
    def n_features_in_(self) -> int:
        self._check_fitted()
        return int(self.weights_[0].shape[0])

    @property
    def n_classes_(self) -> int:
        self._check_fitted()
        return int(self.weights_[-1].shape[1])

    def init_weights(self, n_features: int, n_classes: int) -> GCN:
        """Draw fresh weights (Glorot uniform; zero biases) and reset the dropout generator.

        :meth:`fit` calls it; call it yourself to use the model untrained.

        Examples
        --------
        >>> m = GCN(hidden=(5,), seed=0).init_weights(4, 3)
        >>> [W.shape for W in m.weights_]
        [(4, 5), (5, 3)]
        """
        n_features = integer_option(n_features, "n_features", 1)
        n_classes = integer_option(n_classes, "n_classes", 1)
        widths = (n_features, *self.hidden, n_classes)
        # the weights, drawn in float64 first
        check_memory(
            (8 + self.dtype.itemsize) * sum(a * b for a, b in pairwise(widths)),
            what=f"the weights of a GCN with {n_features} features, hidden={self.hidden} and "
            f"{n_classes} classes",
        )
        self.rng = np.random.default_rng(self.seed)
        self.weights_ = [self._glorot(a, b) for a, b in pairwise(widths)]
        self.biases_ = [np.zeros(b, self.dtype) for b in widths[1:]] if self.bias else None
        return self

    def _glorot(self, fan_in: int, fan_out: int) -> np.ndarray:
        r = np.sqrt(6.0 / (fan_in + fan_out))
        return self.rng.uniform(-r, r, (fan_in, fan_out)).astype(self.dtype)

    @property
    def params(self) -> list[np.ndarray]:
        """The weights and biases ``[W_0, b_0, W_1, b_1, ...]`` (``[W_0, W_1, ...]`` without
        biases): the arrays themselves, which training updates in place."""
        self._check_fitted()
        if self.biases_ is None:
            return list(self.weights_)
        return [p for pair in zip(self.weights_, self.biases_, strict=True) for p in pair]

    def _check_fitted(self) -> None:
        if self.weights_ is None:
            raise ValueError("this GCN has no weights yet: call fit (or GCN.load) first")

    # ---------------------------------------------------------------- inputs
    def operator(self, graph, n: int | None = None) -> GCNOperator:
        """The propagation operator of ``graph`` in the model's dtype.

        A :class:`graphpar.GCNOperator` (from :func:`graphpar.gcn_normalize`) is
        used as it is; anything else :func:`graphpar.gcn_normalize` accepts (a
        :class:`graphpar.Graph`, a scipy sparse or dense adjacency matrix) is
        normalised to ``D^-1/2 (A+I) D^-1/2``. An integer array or torch tensor
        of shape ``(2, E)`` is a PyTorch Geometric ``edge_index``
        (:meth:`graphpar.Graph.from_edge_index`, with ``n`` vertices when given);
        a ``(2, 2)`` array is read as an adjacency matrix unless ``n`` is not 2.

        Examples
        --------
        >>> import numpy as np
        >>> GCN().operator(np.ones((2, 2)) - np.eye(2)).toarray()
        array([[0.5, 0.5],
               [0.5, 0.5]], dtype=float32)
        """
        if isinstance(graph, GCNOperator):
            if graph.ndim != 2 or graph.shape[0] != graph.shape[1]:
                raise ValueError(f"the operator must be square, got shape {graph.shape}")
            return as_operator(graph, dtype=self.dtype)
        graph = from_torch(graph, "graph")
        if is_edge_index(graph, n):
            from graphpar._graph import Graph

            graph = Graph.from_edge_index(graph, num_nodes=n)
        # checked here so that errors name the argument as fit's callers know it
        graph = validate_graph(graph, directed=True, weights="finite", name="graph")
        return gcn_normalize(graph, dtype=self.dtype)

    def prepare_features(self, X, n: int | None = None):
        """The features as the network sees them: checked, in the model's dtype and, with
        ``normalize_features``, every row scaled to sum 1.

        Parameters
        ----------
        X : array_like or scipy sparse, shape (n, f)
            Raw features (numpy, scipy sparse, torch tensors, lists).
        n : int, optional
            Number of vertices ``X`` must have rows for.

        Examples
        --------
        >>> GCN().prepare_features([[1.0, 3.0]])
        array([[0.25, 0.75]], dtype=float32)
        """
        return self._features(X, n, check_width=True)

    def _features(self, X, n: int | None, *, check_width: bool, name: str = "X"):
        X = check_features(X, n, name)
        if check_width and self.weights_ is not None and X.shape[1] != self.n_features_in_:
            raise ValueError(f"{name} has {X.shape[1]} features (columns) but the model expects "
                             f"{self.n_features_in_}")
        if self.normalize_features:
            return row_normalize(X, self.dtype)
        if sp.issparse(X):
            return sp.csr_array(X, dtype=self.dtype)
        return np.asarray(X, dtype=self.dtype)

    def _inputs(self, graph, X):
        self._check_fitted()
        op = self.operator(graph, rows_of(X))
        return op, network_input(self.prepare_features(X, op.shape[0]), self.dtype)

    # ---------------------------------------------------------------- forward
    def _forward(self, op, Xp, rng, layers: int | None = None):
        """The pre-activations ``Z_l`` of the first ``layers`` layers, each layer's input
        (after dropout) and its dropout mask (:func:`graphpar._gcn_layers.forward`)."""
        return forward(self.weights_, self.biases_, Xp, lambda S: aggregate(op, S),
                       dropout=self.dropout, dtype=self.dtype, rng=rng, layers=layers)

    def _logits(self, op, Xp) -> np.ndarray:
        return self._forward(op, Xp, None)[0][-1]

    def logits(self, graph, X) -> np.ndarray:
        """Class scores (before softmax) of every vertex, in evaluation mode (no dropout).

        Parameters
        ----------
        graph : Graph, GCNOperator, scipy sparse or array_like, shape (n, n)
            See :meth:`operator`.
        X : array_like or scipy sparse, shape (n, n_features_in_)
            Raw features (scaled here when ``normalize_features``).

        Returns
        -------
        ndarray, shape (n, n_classes_), of the model's dtype

        Examples
        --------
        >>> import numpy as np
        >>> m = GCN(seed=1).init_weights(2, 3)
        >>> m.logits(np.eye(4), np.ones((4, 2))).shape
        (4, 3)
        """
        op, Xp = self._inputs(graph, X)
        return self._logits(op, Xp)

    def predict(self, graph, X) -> np.ndarray:
        """Predicted class of every vertex (evaluation mode).

        Parameters are :meth:`logits`'s.

        Returns
        -------
        ndarray of int64, shape (n,)

        Examples
        --------
        >>> import numpy as np
        >>> GCN(seed=1).init_weights(2, 3).predict(np.eye(4), np.ones((4, 2))).dtype
        dtype('int64')
        """
        return self.logits(graph, X).argmax(axis=1).astype(np.int64)

    def predict_proba(self, graph, X) -> np.ndarray:
        """Class probabilities of every vertex (softmax of :meth:`logits`), in float64.

        Examples
        --------
        >>> import numpy as np
        >>> p = GCN(seed=1).init_weights(2, 3).predict_proba(np.eye(4), np.ones((4, 2)))
        >>> p.shape, bool(np.allclose(p.sum(axis=1), 1))
        ((4, 3), True)
        """
        return softmax_rows(self.logits(graph, X))

    def embed(self, graph, X, layer: int | None = None) -> np.ndarray:
        """The output of layer ``layer`` for every vertex, in evaluation mode.

        Parameters
        ----------
        graph, X
            As in :meth:`logits`.
        layer : int, optional
            ``1 .. n_layers``: the output of that layer, after its ReLU for a
            hidden layer (``layer=n_layers`` gives the class scores). Default:
            the last hidden layer, ``n_layers - 1``.

        Returns
        -------
        ndarray, shape (n, width of that layer)

        Examples
        --------
        >>> import numpy as np
        >>> m = GCN(hidden=(8, 4), seed=0).init_weights(3, 2)
        >>> m.embed(np.eye(5), np.ones((5, 3)), layer=1).shape
        (5, 8)
        >>> m.embed(np.eye(5), np.ones((5, 3))).shape
        (5, 4)
        """
        L = self.n_layers
        if layer is None:
            if L == 1:
                raise ValueError("this GCN has no hidden layer (hidden=()): pass layer=1 for "
                                 "the class scores")
            layer = L - 1
        ok = isinstance(layer, int | np.integer) and not isinstance(layer, bool)
        if not ok or not 1 <= layer <= L:
            raise ValueError(f"layer must be an integer in [1, {L}] for this {L}-layer GCN, "
                             f"got {layer!r}")
        op, Xp = self._inputs(graph, X)
        Z = self._forward(op, Xp, None, layers=int(layer))[0][-1]
        return Z if layer == L else np.maximum(Z, 0)

    # ---------------------------------------------------------------- loss
    def loss_and_grad(self, op, X, labels, mask, *, weight_decay: float = 0.0, rng=None):
        """Masked mean softmax cross-entropy plus ``weight_decay * |W_0|^2 / 2``, and its gradient.

        Parameters
        ----------
        op : GCNOperator or scipy sparse, shape (n, n)
            The normalised adjacency.
        X : ndarray or scipy sparse, shape (n, n_features_in_)
            The features as the network sees them (:meth:`prepare_features`).
        labels : ndarray of int, shape (n,)
        mask : ndarray of bool, shape (n,)
            Vertices whose loss counts.
        weight_decay : float
            L2 penalty on ``W_0`` (the paper's: 5e-4).
        rng : numpy.random.Generator, optional
            Draw dropout masks from it (training mode); ``None``: no dropout.

        Returns
        -------
        loss : float
        grads : list of ndarray
            Gradients for :attr:`params`, in its order.
        logits : ndarray, shape (n, n_classes_)

        Examples
        --------
        >>> import numpy as np
        >>> from graphpar import gcn_normalize
        >>> m = GCN(bias=False, seed=0, dtype=np.float64).init_weights(2, 2)
        >>> loss, grads, _ = m.loss_and_grad(gcn_normalize(np.eye(3)), np.ones((3, 2)),
        ...                                  np.array([0, 1, 1]), np.ones(3, bool))
        >>> [g.shape for g in grads]
        [(2, 16), (16, 2)]
        """
        self._check_fitted()
        Xp = network_input(X, self.dtype)
        if Xp.shape[0] != op.shape[1]:
            raise ValueError(f"X has {Xp.shape[0]} rows but the operator has {op.shape[1]} "
                             "columns")
        if Xp.shape[1] != self.n_features_in_:
            raise ValueError(f"X has {Xp.shape[1]} features but the model expects "
                             f"{self.n_features_in_}")
        pre, inputs, masks = self._forward(op, Xp, rng)
        Z = pre[-1]
        idx = np.flatnonzero(mask)
        if idx.size == 0:
            raise ValueError("mask selects no vertices")
        y = np.asarray(labels)[idx]
        C = Z.shape[1]
        if y.min() < 0 or y.max() >= C:
            raise ValueError(f"labels under the mask must be in [0, {C}), got {y.min()}..{y.max()}")
        loss_sum, _, G = cross_entropy(Z, idx, y, idx.size, self.dtype)
        W = self.weights_
        loss = loss_sum / idx.size
        loss += 0.5 * weight_decay * float(np.sum(W[0].astype(np.float64) ** 2))
        gW, gb = backward(W, self.biases_, Xp, lambda G: aggregate(op, G, transpose=True),
                          pre, inputs, masks, G)
        if weight_decay:
            gW[0] += self.dtype.type(weight_decay) * W[0]
        if gb is None:
            return float(loss), gW, Z
        gb = [g.astype(self.dtype) for g in gb]
        return float(loss), [g for pair in zip(gW, gb, strict=True) for g in pair], Z

    # ---------------------------------------------------------------- training
    def fit(self, graph, X, y, train=None, val=None, *, callback=None) -> GCN:
        """Train on ``graph`` from fresh weights, full batch (Adam), for :attr:`epochs` epochs.

        Parameters
        ----------
        graph : Graph, GCNOperator, scipy sparse or array_like, shape (n, n)
            See :meth:`operator`.
        X : array_like or scipy sparse, shape (n, f)
            Raw vertex features (numpy, scipy sparse, torch tensors).
        y : array_like of int, shape (n,)
            Classes ``0 .. C-1``; other values (``-1`` for unlabelled) only
            outside ``train`` and ``val``. ``C`` is one more than the largest
            label under ``train`` or ``val``.
        train, val : array_like, optional
            Boolean masks of shape ``(n,)`` or arrays of distinct vertex
            indices. ``train`` defaults to every vertex; without ``val`` the
            validation history is nan and ``early_stopping`` never triggers.
        callback : callable, optional
            Called as ``callback(epoch, record)`` after each epoch with that
            epoch's :attr:`history_` entries.

        Returns
        -------
        GCN
            ``self``, with :attr:`weights_`, :attr:`biases_`, :attr:`history_`
            and :attr:`n_epochs_` set.

        Examples
        --------
        >>> import numpy as np
        >>> A = np.ones((4, 4)) - np.eye(4)
        >>> m = GCN(epochs=5).fit(A, np.eye(4), [0, 0, 1, 1], train=[0, 3], val=[1, 2])
        >>> m.n_epochs_, m.n_classes_
        (5, 2)
        """
        op = self.operator(graph, rows_of(X))
        n = op.shape[0]
        Xm = self._features(X, n, check_width=False)
        y = check_labels(y, n)
        train = np.ones(n, bool) if train is None else vertex_mask(train, n, "train")
        val = np.zeros(n, bool) if val is None else vertex_mask(val, n, "val")
        n_classes = count_classes(y, {"train": train, "val": val})
        check_training_memory(self.dtype, self.hidden, n, Xm.shape[1], n_classes)
        self.init_weights(Xm.shape[1], n_classes)
        from graphpar._gcn_train import SerialLearner, fit_loop

        learner = SerialLearner(self, op, Xm, y, (train, val, np.zeros(n, bool)),
                                self.weight_decay)
        fit_loop(learner, epochs=self.epochs, lr=self.lr, early_stopping=self.early_stopping,
                 callback=callback, progress=self.progress)
        return self

    # ---------------------------------------------------------------- files
    def save(self, path) -> None:
        """Write the weights and the configuration to ``path`` (an ``.npz``), atomically.

        Nothing else is stored (no graph, features or history), and nothing
        in the file needs pickle: :meth:`load` reads it with
        ``numpy.load(path, allow_pickle=False)``.

        Examples
        --------
        >>> import os, tempfile
        >>> path = os.path.join(tempfile.mkdtemp(), "model.npz")
        >>> GCN(hidden=(4,)).init_weights(3, 2).save(path)
        >>> GCN.load(path).weights_[0].shape
        (3, 4)
        """
        save_model(self, path)

    @classmethod
    def load(cls, path) -> GCN:
        """Read a model written by :meth:`save` (no pickle involved).

        Every array's shape and dtype is checked against the stored
        configuration before it is read, and every weight must be finite.

        Raises
        ------
        ValueError
            Naming ``path`` and what is wrong with it.
        OSError
            When ``path`` cannot be read.

        Examples
        --------
        >>> import os, tempfile
        >>> path = os.path.join(tempfile.mkdtemp(), "model.npz")
        >>> GCN(hidden=(8, 4), seed=3).init_weights(5, 2).save(path)
        >>> GCN.load(path).hidden
        (8, 4)
        """
        return load_model(cls, path)


# the training names, importable from here as before the split (graphpar.train_gcn ...)
from graphpar._gcn_train import (  # noqa: E402
    Learner,
    SerialLearner,
    TrainResult,
    adam_step,
    fit_loop,
    prepare_training,
    train_gcn,
)
