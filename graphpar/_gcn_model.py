"""Graph convolutional networks (Kipf and Welling, ICLR 2017), NumPy and Numba only.

Layer ``l`` of a :class:`GCN` computes ``Z_l = op @ (dropout(H_l) @ W_l) + b_l`` with
``H_0 = X`` (the features, row-normalised by default), ``H_{l+1} = relu(Z_l)`` and the
last ``Z`` the class scores; ``op`` is the normalised adjacency from
:func:`graphpar.gcn_normalize`. The forward and the hand-written backward run every
sparse product through :func:`graphpar.aggregate`'s kernel; training is full batch with
Adam, softmax cross-entropy on the training vertices and L2 weight decay on the first
layer's weights, as in the paper's ``gcn`` code. One training loop (:func:`fit_loop`)
serves :meth:`GCN.fit`, :func:`train_gcn` and the distributed
:func:`graphpar.mpi.train_gcn`.
"""

from __future__ import annotations

import json
import math
import os
import sys
import time
import zipfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import pairwise
from typing import TYPE_CHECKING, Protocol

import numpy as np
import scipy.sparse as sp

from graphpar._gcn import SERIAL_WORK, GCNOperator, aggregate, as_operator, gcn_normalize
from graphpar.kernels import aggregate as _kernel
from graphpar.limits import check_memory

if TYPE_CHECKING:
    from graphpar.mpi._gcn import GCNMPIStats

__all__ = [
    "GCN", "Learner", "SerialLearner", "TrainResult", "adam_step", "as_array",
    "check_features", "check_labels", "check_training_options", "fit_loop", "from_torch",
    "npy_header", "prepare_training", "train_gcn", "vertex_mask",
]

_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))
# What GCN.save writes: the format name and version in the stored configuration.
MODEL_FORMAT = "graphpar.GCN"
MODEL_VERSION = 1


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


def _hidden(value, name: str):
    """One positive width (returned as an int) or a sequence of them (a tuple, maybe empty)."""
    if isinstance(value, Sequence | np.ndarray) and not isinstance(value, str | bytes):
        widths = list(value)
        for i, w in enumerate(widths):
            _integer(w, f"{name}[{i}]", 1)
        return tuple(int(w) for w in widths)
    return _integer(value, name, 1)


def _bool(value, name: str) -> bool:
    if not isinstance(value, bool | np.bool_):
        raise ValueError(f"{name} must be True or False, got {value!r}")
    return bool(value)


_CHECKS = {
    "hidden": _hidden,
    "epochs": lambda v, n: _integer(v, n, 1),
    "early_stopping": lambda v, n: None if v is None else _integer(v, n, 1),
    # numpy's generators take any non-negative integer and refuse negative ones
    "seed": lambda v, n: _integer(v, n, 0),
    "lr": lambda v, n: _real(v, n, 0.0, None, lo_open=True, text="a finite number > 0"),
    "dropout": lambda v, n: _real(v, n, 0.0, 1.0, lo_open=False, text="in [0, 1)"),
    "weight_decay": lambda v, n: _real(
        v, n, 0.0, None, lo_open=False, text="a finite number >= 0"
    ),
    "bias": _bool,
    "normalize_features": _bool,
}


def check_training_options(names: dict[str, str] | None = None, **options) -> dict:
    """Check GCN training options; return them converted (int or float), else raise ValueError.

    Parameters
    ----------
    names : dict, optional
        How the caller spells each option in errors (the command line passes
        ``{"lr": "--lr", ...}``); default: the parameter names.
    **options
        Any of ``hidden`` (a positive integer, or a sequence of them: a tuple),
        ``epochs``, ``early_stopping`` (positive integers; ``early_stopping``
        may be None), ``seed`` (a non-negative integer, as numpy's generators
        require), ``lr`` (finite, > 0), ``dropout`` (in [0, 1)),
        ``weight_decay`` (finite, >= 0), ``bias`` and ``normalize_features``
        (True or False).

    Raises
    ------
    ValueError
        Naming the first bad option and its value.

    Examples
    --------
    >>> check_training_options(hidden=16, lr=0.01)
    {'hidden': 16, 'lr': 0.01}
    >>> check_training_options(hidden=[64, 32])
    {'hidden': (64, 32)}
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


# ------------------------------------------------------------------ input checks
def as_array(value, name: str):
    """``value`` as a numpy array or scipy sparse array; torch tensors are converted.

    A torch tensor (dense or sparse) is converted without importing torch:
    only when the caller's program has imported it already can ``value`` be one.

    Examples
    --------
    >>> as_array([1, 2], "y")
    array([1, 2])
    """
    value = from_torch(value, name)
    if sp.issparse(value):
        return value
    try:
        return np.asarray(value)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"{name} must be an array, got {type(value).__name__}: {exc}") from None


def from_torch(value, name: str):
    """A torch tensor as a numpy array (a sparse one as a scipy ``csr_array``); anything else
    as it is. torch is never imported: if ``value`` is a tensor, the caller imported it.

    Examples
    --------
    >>> from_torch([1, 2], "y")
    [1, 2]
    """
    torch = sys.modules.get("torch")
    if torch is None or not isinstance(value, torch.Tensor):
        return value
    if value.layout != torch.strided:  # sparse COO, CSR, ...
        coo = value.detach().cpu().to_sparse_coo().coalesce()
        if coo.ndim != 2:
            raise ValueError(f"{name} must be 2-D, got a sparse tensor of shape "
                             f"{tuple(coo.shape)}")
        idx = coo.indices().numpy()
        return sp.csr_array((coo.values().numpy(), (idx[0], idx[1])), shape=tuple(coo.shape))
    return value.detach().cpu().numpy()


def _rows(X) -> int | None:
    """The number of rows of features ``X`` if it has a 2-D shape, else None."""
    shape = getattr(X, "shape", None)
    if shape is None:
        try:
            return len(X)
        except TypeError:
            return None
    return int(shape[0]) if len(shape) == 2 else None


def _is_edge_index(graph, n: int | None) -> bool:
    """Whether ``graph`` is a (2, E) integer edge list rather than an adjacency matrix."""
    if sp.issparse(graph) or not hasattr(graph, "shape") or not hasattr(graph, "dtype"):
        return False
    shape = graph.shape
    if len(shape) != 2 or shape[0] != 2 or np.dtype(graph.dtype).kind not in "iu":
        return False
    return shape[1] != 2 or (n is not None and n != 2)


def check_features(X, n: int | None, name: str = "X", *, row0: int = 0):
    """Check vertex features: a real 2-D array (dense or scipy sparse), finite, with ``n`` rows.

    ``n=None`` accepts any number of rows; errors name row ``row0 + i`` (a rank's block of
    rows names global rows).

    Returns the features as a numpy array or a scipy ``csr_array`` (unchanged dtype
    when real, else float64).

    Examples
    --------
    >>> check_features([[1.0, 2.0]], 1).shape
    (1, 2)
    >>> check_features([[1.0, float("nan")]], 1)
    Traceback (most recent call last):
    ...
    ValueError: X contains nan (row 0, column 1)
    """
    X = as_array(X, name)
    if sp.issparse(X):
        X = sp.csr_array(X)
        values = X.data
    else:
        values = X
    if X.dtype.kind not in "biuf":
        raise TypeError(f"{name} must hold real numbers, got dtype {X.dtype}")
    if X.ndim != 2:
        raise ValueError(f"{name} must be 2-D (one row per vertex), got shape {X.shape}")
    if n is not None and X.shape[0] != n:
        raise ValueError(f"{name} has {X.shape[0]} rows but the graph has {n} vertices")
    if X.shape[1] == 0:
        raise ValueError(f"{name} has no columns (features)")
    if values.dtype.kind == "f":
        finite = np.isfinite(values)
        if not finite.all():
            k = int(np.argmin(finite.ravel()))
            if sp.issparse(X):
                i = int(np.searchsorted(X.indptr, k, side="right")) - 1
                j = int(X.indices[k])
            else:
                i, j = divmod(k, X.shape[1])
            raise ValueError(f"{name} contains {values.flat[k]} (row {row0 + i}, column {j})")
    return X


def check_labels(y, n: int, name: str = "y") -> np.ndarray:
    """Check vertex labels: integers, one per vertex (negative: unlabelled, outside the masks).

    Examples
    --------
    >>> check_labels([0, 2, -1], 3)
    array([ 0,  2, -1])
    >>> check_labels([0.0, 1.0], 2)
    Traceback (most recent call last):
    ...
    ValueError: y must be integers (class 0, 1, ...; -1 for unlabelled vertices), got dtype float64
    """
    y = as_array(y, name)
    if sp.issparse(y):
        raise TypeError(f"{name} must be a dense array, got a scipy sparse {y.format} array")
    if y.dtype.kind not in "iu":
        raise ValueError(f"{name} must be integers (class 0, 1, ...; -1 for unlabelled "
                         f"vertices), got dtype {y.dtype}")
    if y.shape != (n,):
        raise ValueError(f"{name} must have shape ({n},), one label per vertex, got shape "
                         f"{y.shape}")
    return y.astype(np.int64, copy=False)


def vertex_mask(value, n: int, name: str, *, allow_indices: bool = True) -> np.ndarray:
    """A set of vertices as a boolean mask: from a boolean mask or an array of vertex indices.

    Parameters
    ----------
    value : array_like
        A boolean array of shape ``(n,)``, or (with ``allow_indices``) a 1-D
        array of distinct integer indices in ``[0, n)``.
    n : int
        Number of vertices.
    name : str
        What ``value`` is, for errors (``"train"``, ``"split.npz: 'val'"``).

    Examples
    --------
    >>> vertex_mask([3, 0], 4, "train").tolist()
    [True, False, False, True]
    >>> vertex_mask([0, 1, 1, 0], 4, "train")
    Traceback (most recent call last):
    ...
    ValueError: train lists vertex 1 twice (positions 1 and 2); a 0/1 mask must be boolean
    """
    m = as_array(value, name)
    if sp.issparse(m):
        raise TypeError(f"{name} must be a dense array, got a scipy sparse {m.format} array")
    if m.dtype == bool:
        if m.shape != (n,):
            raise ValueError(f"{name} must have shape ({n},) as a boolean mask, got shape "
                             f"{m.shape}")
        return m
    if not allow_indices:
        raise ValueError(f"{name} must be a boolean array of shape ({n},), got {m.dtype} "
                         f"{m.shape}")
    if m.size == 0 and m.ndim == 1:
        return np.zeros(n, bool)
    if m.dtype.kind not in "iu" or m.ndim != 1:
        raise ValueError(f"{name} must be a boolean mask of shape ({n},) or a 1-D array of "
                         f"vertex indices, got {m.dtype} of shape {m.shape}")
    bad = (m < 0) | (m >= n)
    if bad.any():
        k = int(np.argmax(bad))
        raise ValueError(f"{name} lists vertex {int(m[k])} (position {k}), outside [0, {n})")
    mask = np.zeros(n, bool)
    mask[m] = True
    if int(mask.sum()) != m.size:
        order = np.argsort(m, kind="stable")
        s = m[order]
        second = int(order[1:][s[1:] == s[:-1]].min())  # the first repeat, by position
        first = int(np.flatnonzero(m == m[second])[0])
        hint = "; a 0/1 mask must be boolean" if m.size == n and m.max() <= 1 else ""
        raise ValueError(f"{name} lists vertex {int(m[second])} twice (positions {first} and "
                         f"{second}){hint}")
    return mask


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
        self._transpose = None

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
        if self._transpose is None:  # training only: the CSR of X.T, entry k is X's perm[k]
            nnz = self.indices.size
            order = sp.csr_array((np.arange(nnz, dtype=np.float64), self.indices, self.indptr),
                                 shape=self.shape).T.tocsr()
            order.sort_indices()
            self._transpose = (
                order.indptr.astype(np.int64),
                order.indices.astype(np.int32 if self.shape[0] < 2**31 else np.int64),
                order.data.astype(np.int64),
            )
        t_indptr, t_indices, perm = self._transpose
        self._spmm(t_indptr, t_indices, data[perm], G, out)


def _network_input(X, dtype):
    """Model-space features ready for the forward: a :class:`_SparseInput` or a C array."""
    if isinstance(X, _SparseInput):
        return X
    if sp.issparse(X):
        return _SparseInput(X, dtype)
    return np.ascontiguousarray(X, dtype=dtype)


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


def _softmax_rows(Z: np.ndarray) -> np.ndarray:
    z = Z.astype(np.float64)
    z -= z.max(axis=1, keepdims=True)
    np.exp(z, out=z)
    z /= z.sum(axis=1, keepdims=True)
    return z


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
        if self.dtype not in _FLOATS:
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
        n_features = _integer(n_features, "n_features", 1)
        n_classes = _integer(n_classes, "n_classes", 1)
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
        if _is_edge_index(graph, n):
            from graphpar._graph import Graph

            graph = Graph.from_edge_index(graph, num_nodes=n)
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
            return _row_normalize(X, self.dtype)
        if sp.issparse(X):
            return sp.csr_array(X, dtype=self.dtype)
        return np.asarray(X, dtype=self.dtype)

    def _inputs(self, graph, X):
        self._check_fitted()
        op = self.operator(graph, _rows(X))
        return op, _network_input(self.prepare_features(X, op.shape[0]), self.dtype)

    # ---------------------------------------------------------------- forward
    def _forward(self, op, Xp, rng, layers: int | None = None):
        """The pre-activations ``Z_l`` of the first ``layers`` layers, each layer's input
        (after dropout) and its dropout mask; dropout from ``rng`` when given."""
        L = self.n_layers if layers is None else layers
        dt = self.dtype
        keep = 1.0 - self.dropout
        train = rng is not None and self.dropout > 0
        W = self.weights_
        pre, inputs, masks = [], [], []
        for layer in range(L):
            if layer == 0:
                S = np.empty((Xp.shape[0], W[0].shape[1]), dtype=dt)
                if isinstance(Xp, _SparseInput):
                    h = Xp.data
                    if train:
                        h = (h * (rng.random(h.size) < keep).astype(dt) / keep).astype(
                            dt, copy=False)
                    Xp.matmul(h, W[0], S)
                else:
                    h = Xp
                    if train:
                        h = (Xp * (rng.random(Xp.shape) < keep) / keep).astype(dt)
                    np.matmul(h, W[0], out=S)
                mask = None
            else:
                h = np.maximum(pre[-1], 0)
                mask = None
                if train:
                    mask = ((rng.random(h.shape) < keep) / keep).astype(dt)
                    h = h * mask
                S = h @ W[layer]
            Z = aggregate(op, S)
            if self.biases_ is not None:
                Z += self.biases_[layer]
            pre.append(Z)
            inputs.append(h)
            masks.append(mask)
        return pre, inputs, masks

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
        return _softmax_rows(self.logits(graph, X))

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
        Xp = _network_input(X, self.dtype)
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
        z = Z[idx].astype(np.float64)
        z -= z.max(axis=1, keepdims=True)
        logp = z - np.log(np.exp(z).sum(axis=1, keepdims=True))
        loss = -logp[np.arange(idx.size), y].mean()
        W = self.weights_
        loss += 0.5 * weight_decay * float(np.sum(W[0].astype(np.float64) ** 2))
        G = np.zeros_like(Z)
        P = np.exp(logp)
        P[np.arange(idx.size), y] -= 1.0
        G[idx] = (P / idx.size).astype(self.dtype)
        gW = [None] * self.n_layers
        gb = [None] * self.n_layers
        for layer in range(self.n_layers - 1, -1, -1):
            # Z_l = op @ (h_l W_l) + b_l
            if self.biases_ is not None:
                gb[layer] = G.sum(axis=0, dtype=np.float64).astype(self.dtype)
            dS = aggregate(op, G, transpose=True)
            h = inputs[layer]
            if layer == 0:
                gW[0] = np.empty_like(W[0])
                if isinstance(Xp, _SparseInput):
                    Xp.rmatmul_t(h, dS, gW[0])
                else:
                    np.matmul(h.T, dS, out=gW[0])
                break
            gW[layer] = h.T @ dS
            dH = dS @ W[layer].T
            if masks[layer] is not None:
                dH *= masks[layer]
            G = dH * (pre[layer - 1] > 0)
        if weight_decay:
            gW[0] += self.dtype.type(weight_decay) * W[0]
        if self.biases_ is None:
            return float(loss), gW, Z
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
        op = self.operator(graph, _rows(X))
        n = op.shape[0]
        Xm = self._features(X, n, check_width=False)
        y = check_labels(y, n)
        train = np.ones(n, bool) if train is None else vertex_mask(train, n, "train")
        val = np.zeros(n, bool) if val is None else vertex_mask(val, n, "val")
        n_classes = _n_classes(y, {"train": train, "val": val})
        _check_training_memory(self.dtype, self.hidden, n, Xm.shape[1], n_classes)
        self.init_weights(Xm.shape[1], n_classes)
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
        from graphpar.io import atomic_write

        self._check_fitted()
        config = dict(self.get_config(), hidden=list(self.hidden), format=MODEL_FORMAT,
                      version=MODEL_VERSION, n_features=self.n_features_in_,
                      n_classes=self.n_classes_)
        arrays = {"config": np.array(json.dumps(config))}
        for layer, W in enumerate(self.weights_):
            arrays[f"weight_{layer}"] = W
            if self.biases_ is not None:
                arrays[f"bias_{layer}"] = self.biases_[layer]
        with atomic_write(path, "wb") as f:
            np.savez(f, **arrays)

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
        name = os.fspath(path)
        try:
            npz = np.load(name, allow_pickle=False)
        except (ValueError, EOFError, zipfile.BadZipFile) as exc:
            raise ValueError(f"{name}: not a model written by GCN.save ({exc})") from None
        if not isinstance(npz, np.lib.npyio.NpzFile):
            raise ValueError(f"{name}: not a model written by GCN.save (a single array, not "
                             "an .npz archive)")
        with npz:
            try:
                return cls._from_npz(npz)
            except _ModelFileError as exc:
                raise ValueError(f"{name}: {exc}") from None
            except (ValueError, EOFError, zipfile.BadZipFile) as exc:
                raise ValueError(f"{name}: not a model written by GCN.save ({exc})") from None

    @classmethod
    def _from_npz(cls, npz) -> GCN:
        if "config" not in npz.files:
            raise _ModelFileError("no 'config' entry: not a model written by GCN.save")
        _check_header(npz, "config", None, "U")
        raw = npz["config"]
        try:
            config = json.loads(str(raw))
        except json.JSONDecodeError as exc:
            raise _ModelFileError(f"'config' is not JSON ({exc})") from None
        if not isinstance(config, dict) or config.get("format") != MODEL_FORMAT:
            raise _ModelFileError("'config' does not describe a graphpar GCN")
        if config.get("version") != MODEL_VERSION:
            raise _ModelFileError(f"model format version {config.get('version')!r}; this "
                                  f"graphpar reads version {MODEL_VERSION}")
        keys = ("hidden", "dropout", "lr", "weight_decay", "epochs", "bias", "early_stopping",
                "normalize_features", "seed", "dtype")
        missing = [k for k in (*keys, "n_features", "n_classes") if k not in config]
        if missing:
            raise _ModelFileError(f"'config' lacks {', '.join(missing)}")
        if config["dtype"] not in ("float32", "float64"):
            raise _ModelFileError(f"'config': dtype must be float32 or float64, got "
                                  f"{config['dtype']!r}")
        try:
            model = cls(**{k: config[k] for k in keys})
            n_features = _integer(config["n_features"], "n_features", 1)
            n_classes = _integer(config["n_classes"], "n_classes", 1)
        except (TypeError, ValueError) as exc:
            raise _ModelFileError(f"'config': {exc}") from None
        widths = (n_features, *model.hidden, n_classes)
        expect = {}
        for layer, shape in enumerate(pairwise(widths)):
            expect[f"weight_{layer}"] = shape
            if model.bias:
                expect[f"bias_{layer}"] = (shape[1],)
        extra = sorted(set(npz.files) - set(expect) - {"config"})
        if extra:
            raise _ModelFileError(f"holds {', '.join(map(repr, extra))}, which a model file "
                                  "does not")
        check_memory(model.dtype.itemsize * sum(math.prod(s) for s in expect.values()),
                     what="the model's weights")
        arrays = {}
        for key, shape in expect.items():
            if key not in npz.files:
                raise _ModelFileError(f"lacks '{key}' (of shape {shape})")
            _check_header(npz, key, shape, "f")
            arr = np.array(npz[key], dtype=model.dtype, order="C")
            finite = np.isfinite(arr)
            if not finite.all():
                k = int(np.argmin(finite.ravel()))
                raise _ModelFileError(f"'{key}' contains {arr.flat[k]} (entry "
                                      f"{np.unravel_index(k, arr.shape)})")
            arrays[key] = arr
        model.weights_ = [arrays[f"weight_{i}"] for i in range(model.n_layers)]
        model.biases_ = ([arrays[f"bias_{i}"] for i in range(model.n_layers)] if model.bias
                         else None)
        return model


class _ModelFileError(Exception):
    """What is wrong with a model file (prefixed with its name by GCN.load)."""


def npy_header(fp, nbytes: int) -> tuple[tuple[int, ...], np.dtype, int]:
    """The shape, dtype and data size of the ``.npy`` stream ``fp`` (at its start), from its
    header alone; ``nbytes`` is the stream's length.

    Raises ValueError for anything but an ``.npy`` header of format 1.0 or 2.0 that fits in
    ``nbytes``, so that a hostile header is refused before anything is allocated for it.

    Examples
    --------
    >>> import io
    >>> buf = io.BytesIO()
    >>> np.save(buf, np.zeros((2, 3), np.float32))
    >>> npy_header(io.BytesIO(buf.getvalue()), len(buf.getvalue()))
    ((2, 3), dtype('float32'), 24)
    """
    import struct

    from numpy.lib import format as npy

    version = npy.read_magic(fp)
    if version not in ((1, 0), (2, 0)):
        raise ValueError(f"unsupported .npy format version {version}")
    start = fp.tell()
    width = 2 if version == (1, 0) else 4
    raw = fp.read(width)
    if len(raw) != width:
        raise ValueError("the .npy header is cut short")
    (length,) = struct.unpack("<H" if width == 2 else "<I", raw)
    if start + width + length > nbytes:
        raise ValueError(f"the .npy header declares {length} bytes, more than the file holds")
    fp.seek(start)
    read = npy.read_array_header_1_0 if version == (1, 0) else npy.read_array_header_2_0
    shape, _, dtype = read(fp)
    return tuple(shape), dtype, math.prod(shape) * dtype.itemsize


def _check_header(npz, key: str, shape, kind: str) -> None:
    """Check a stored array's shape and dtype kind from its header, before reading its data."""
    info = npz.zip.getinfo(key + ".npy")
    with npz.zip.open(info) as fp:
        try:
            got_shape, dtype, _ = npy_header(fp, info.file_size)
        except ValueError as exc:
            raise _ModelFileError(f"'{key}' is not a numpy array ({exc})") from None
    if dtype.kind != kind or (shape is not None and tuple(got_shape) != tuple(shape)):
        want = "text" if kind == "U" else "floats"
        want_shape = "" if shape is None else f" of shape {tuple(shape)}"
        raise _ModelFileError(f"'{key}' must be {want}{want_shape}, got {dtype} of shape "
                              f"{tuple(got_shape)}")
    if kind == "U" and dtype.itemsize > 4 * 2**20:
        raise _ModelFileError(f"'{key}' is {dtype.itemsize} bytes; a model's configuration "
                              "is a few hundred")


def _n_classes(labels: np.ndarray, masks: dict) -> int:
    """One more than the largest label under the masks; refuse a negative one there."""
    for name, mask in masks.items():
        under = labels[mask]
        if under.size and under.min() < 0:
            v = int(np.flatnonzero(mask & (labels < 0))[0])
            raise ValueError(f"labels under the {name} mask must be >= 0 (class 0, 1, ...), "
                             f"got {int(labels[v])} at vertex {v}")
    if not masks["train"].any():
        raise ValueError("train selects no vertices")
    union = np.logical_or.reduce(list(masks.values()))
    return int(labels[union].max()) + 1


def _check_training_memory(dtype, hidden, n: int, f: int, n_classes: int) -> None:
    # about ten layer-wide arrays per vertex (activations, masks, gradients) and four
    # weight-sized ones (weights, gradient, Adam's two moments)
    widths = (f, *hidden, n_classes)
    per_vertex = 10 * sum(widths[1:])
    weights = 4 * sum(a * b for a, b in pairwise(widths))
    check_memory(
        np.dtype(dtype).itemsize * (n * per_vertex + weights),
        what=f"training a GCN with hidden={tuple(hidden)} on {n} vertices "
        f"and {f} features",
    )


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
        normalised operator, the features as the network sees them
        (:meth:`GCN.prepare_features`), the checked labels, the boolean masks
        and a :class:`GCN` without biases, freshly initialised.

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
    model = GCN(hidden=hidden, epochs=epochs, lr=lr, dropout=dropout, bias=False,
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
    n_classes = _n_classes(labels, masks)
    _check_training_memory(model.dtype, model.hidden, n, X.shape[1], n_classes)
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
    >>> lr = SerialLearner(GCN(seed=0).init_weights(2, 2), gcn_normalize(np.eye(3)),
    ...                    np.ones((3, 2), np.float32), np.array([0, 1, 1]), masks, 0.0)
    >>> lr.has_split("train"), lr.has_split("val")
    (True, False)
    """

    def __init__(self, model: GCN, op, X, labels, masks, weight_decay: float):
        self.model, self.op, self.labels = model, op, labels
        self.X = _network_input(X, model.dtype)
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
        pred = self.model._logits(self.op, self.X).argmax(axis=1)
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
    progress: bool | None = False,
) -> TrainResult:
    """Train Kipf and Welling's two-layer GCN (no biases) full batch, as their ``gcn/train.py``.

    The convenience wrapper around :class:`GCN`: the model is
    ``GCN(hidden=(hidden,), bias=False, ...)`` and the result adds the test
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
        layer's weights only).
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
    if isinstance(hidden, Sequence | np.ndarray) and not isinstance(hidden, str | bytes):
        raise ValueError(f"hidden must be a positive integer (train_gcn trains two layers; "
                         f"use graphpar.GCN for others), got {hidden!r}")
    op, X, labels, train_mask, val_mask, test_mask, model = prepare_training(
        "train_gcn", adjacency, features, labels, train_mask, val_mask, test_mask,
        hidden=hidden, epochs=epochs, lr=lr, dropout=dropout, weight_decay=weight_decay,
        early_stopping=early_stopping, normalize_features=normalize_features, seed=seed,
        dtype=dtype,
    )
    model.progress = progress
    learner = SerialLearner(model, op, X, labels, (train_mask, val_mask, test_mask),
                            weight_decay)
    return fit_loop(learner, epochs=epochs, lr=lr, early_stopping=early_stopping,
                    callback=callback, progress=progress)
