"""The GCN's layer math: forward, backward and loss, for one process's rows of any graph.

Layer ``l`` computes ``Z_l = op @ (dropout(H_l) @ W_l) + b_l`` with ``H_0`` the
features and ``H_{l+1} = relu(Z_l)``. :func:`forward` and :func:`backward` take the
product with ``op`` (and with ``op.T``) as a function, so the same code serves the
serial model (:func:`graphpar.aggregate` on the whole operator) and the distributed
trainer (a :class:`graphpar.mpi.DistOperator` on a rank's rows, with its halo
exchange). The features enter through an *input*: :class:`DenseInput` or
:class:`SparseInput` here, a rank's rows in :mod:`graphpar.mpi._gcn`; each draws
its dropout mask and multiplies by the first layer's weights.

Dropout draws the serial model's masks: the features' mask first (one value per
entry of dense features, per stored entry of sparse ones), then each hidden
layer's ``(n, width)`` mask, all from one generator, so a rank that keeps its rows
of the same draws trains the serial model.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import scipy.sparse as sp

from graphpar._gcn import SERIAL_WORK, empty_lines
from graphpar.kernels import aggregate as _kernel

__all__ = ["BLOCK", "DenseInput", "Dropped", "SparseInput", "backward", "cross_entropy",
           "draw_later", "dropped_blocks", "forward", "network_input", "row_normalize",
           "softmax_rows"]


# values drawn (and features scaled) a block of rows at a time: no (n, f) float64 temporary
BLOCK = 1 << 18


class Dropped:
    """Dense features after dropout, kept as the generator state that redraws the mask
    (a block of rows at a time) rather than as an ``(n, f)`` array.

    Attributes
    ----------
    state : dict
        A PCG64 ``bit_generator.state`` positioned at the first row's first draw.
    keep : float
        ``1 - dropout``.
    """

    __slots__ = ("keep", "state")

    def __init__(self, state: dict, keep: float):
        self.state, self.keep = state, keep


def dropped_blocks(X: np.ndarray, h: Dropped):
    """``(a, b, rows a:b of X after dropout)`` for the mask recorded in ``h``: the serial
    model's draws (one float64 per entry, row after row) and arithmetic, into a reused
    buffer of about :data:`BLOCK` values.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> h = Dropped(rng.bit_generator.state, 0.5)
    >>> X = np.ones((3, 2))
    >>> whole = X * (np.random.default_rng(0).random((3, 2)) < 0.5) / 0.5
    >>> bool(np.array_equal(np.vstack([b.copy() for _, _, b in dropped_blocks(X, h)]), whole))
    True
    """
    f = X.shape[1]
    local = np.random.Generator(np.random.PCG64())
    local.bit_generator.state = h.state
    step = max(1, BLOCK // max(f, 1))
    buf = np.empty((min(step, X.shape[0]), f), dtype=X.dtype)
    for a in range(0, X.shape[0], step):
        b = min(a + step, X.shape[0])
        blk = buf[:b - a]
        np.multiply(X[a:b], local.random((b - a, f)) < h.keep, out=blk)
        blk /= h.keep
        yield a, b, blk


def draw_later(rng, skip: int, total: int):
    """The state of a copy of ``rng`` after ``skip`` draws, then ``rng`` moved past
    ``total`` draws: what :class:`Dropped` records, for a PCG64 generator (one 64-bit
    word per float64). None for another bit generator.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> g = np.random.Generator(np.random.PCG64())
    >>> g.bit_generator.state = draw_later(rng, 2, 6)
    >>> bool(np.array_equal(g.random(4), np.random.default_rng(0).random(6)[2:]))
    True
    >>> bool(rng.random() == np.random.default_rng(0).random(7)[6])
    True
    """
    if not isinstance(rng.bit_generator, np.random.PCG64):
        return None
    copy = np.random.Generator(np.random.PCG64())
    copy.bit_generator.state = rng.bit_generator.state
    copy.bit_generator.advance(skip)
    rng.bit_generator.advance(total)
    return copy.bit_generator.state


class DenseInput:
    """Dense features ``(n, f)`` in the network's dtype, as :func:`forward` takes them.

    Examples
    --------
    >>> x = DenseInput(np.ones((3, 2)), np.float32)
    >>> out = np.empty((3, 1), np.float32)
    >>> x.matmul(x.plain(), np.ones((2, 1), np.float32), out)
    >>> out.ravel().tolist()
    [2.0, 2.0, 2.0]
    """

    def __init__(self, X, dtype):
        self.X = np.ascontiguousarray(X, dtype=dtype)
        self.shape = self.X.shape

    def plain(self):
        """The features without dropout."""
        return self.X

    def dropped(self, rng, keep: float, dtype):
        """The features with dropout: one draw per entry, kept ones scaled by ``1 / keep``
        (a :class:`Dropped`, redrawn by :meth:`matmul` and :meth:`grad`)."""
        state = draw_later(rng, 0, self.X.size)
        if state is None:
            return (self.X * (rng.random(self.X.shape) < keep) / keep).astype(dtype)
        return Dropped(state, keep)

    def matmul(self, h, W, out) -> None:
        """``out = h @ W`` for ``h`` from :meth:`plain` or :meth:`dropped`."""
        if isinstance(h, Dropped):
            for a, b, blk in dropped_blocks(self.X, h):
                np.matmul(blk, W, out=out[a:b])
        else:
            np.matmul(h, W, out=out)

    def grad(self, h, G, out) -> None:
        """``out = h.T @ G``: the first layer's weight gradient."""
        if isinstance(h, Dropped):
            out[...] = 0
            for a, b, blk in dropped_blocks(self.X, h):
                out += blk.T @ G[a:b]
        else:
            np.matmul(h.T, G, out=out)


class SparseInput:
    """Sparse features with a fixed transpose permutation, so that dropout on the
    stored entries and ``X.T @ G`` need no per-epoch transpose. Its :meth:`plain`
    and :meth:`dropped` values are the stored values (in the CSR order).

    Examples
    --------
    >>> x = SparseInput(sp.csr_array(np.eye(2)), np.float64)
    >>> out = np.empty((2, 1))
    >>> x.matmul(x.plain(), np.array([[1.0], [2.0]]), out)
    >>> out.ravel().tolist()
    [1.0, 2.0]
    """

    def __init__(self, X: sp.csr_array, dtype: np.dtype):
        X = sp.csr_array(X)
        X.sum_duplicates()
        self.shape = X.shape
        # offsets in int32 when they fit, as the GCN operator's: the aggregation kernel
        # then compiles one signature for both (a cold first fit compiles it once)
        self._offsets = np.int32 if X.nnz <= np.iinfo(np.int32).max else np.int64
        self.indptr = X.indptr.astype(self._offsets)
        self.indices = X.indices.astype(np.int32 if X.shape[1] < 2**31 else np.int64)
        self.data = X.data.astype(dtype)
        self._transpose = None

    @staticmethod
    def _spmm(indptr, indices, data, H, out):
        if (indices.size + out.shape[0]) * max(out.shape[1], 1) < SERIAL_WORK:
            _kernel.spmm_rows(indptr, indices, data, H, out, 0, out.shape[0])
        else:
            _kernel.spmm(indptr, indices, data, H, out)

    def plain(self):
        """The stored values without dropout."""
        return self.data

    def dropped(self, rng, keep: float, dtype):
        """The stored values with dropout: one draw per stored entry."""
        h = self.data
        return (h * (rng.random(h.size) < keep).astype(dtype) / keep).astype(dtype, copy=False)

    def matmul(self, data, W, out) -> None:
        """``out = X @ W`` for the stored values ``data``."""
        self._spmm(self.indptr, self.indices, data, W, out)

    def grad(self, data, G, out) -> None:
        """``out = X.T @ G`` for the stored values ``data`` (in X's order)."""
        if self._transpose is None:  # training only: the CSR of X.T, entry k is X's perm[k]
            nnz = self.indices.size
            order = sp.csr_array((np.arange(nnz, dtype=np.float64), self.indices, self.indptr),
                                 shape=self.shape).T.tocsr()
            order.sort_indices()
            self._transpose = (
                order.indptr.astype(self._offsets),
                order.indices.astype(np.int32 if self.shape[0] < 2**31 else np.int64),
                order.data.astype(np.int64),
            )
        t_indptr, t_indices, perm = self._transpose
        self._spmm(t_indptr, t_indices, data[perm], G, out)


def network_input(X, dtype):
    """Model-space features as :func:`forward` takes them: a :class:`SparseInput` or a
    :class:`DenseInput` (either is returned as it is).

    Examples
    --------
    >>> type(network_input(np.eye(2), np.float32)).__name__
    'DenseInput'
    """
    if isinstance(X, SparseInput | DenseInput):
        return X
    if sp.issparse(X):
        return SparseInput(X, dtype)
    return DenseInput(X, dtype)


def row_normalize(X, dtype):
    """Every row of ``X`` (dense or scipy sparse) scaled to sum 1, in ``dtype``; rows of
    zeros stay zero.

    Examples
    --------
    >>> row_normalize(np.array([[1.0, 3.0], [0.0, 0.0]]), np.float64).tolist()
    [[0.25, 0.75], [0.0, 0.0]]
    """
    if sp.issparse(X):
        X = sp.csr_array(X, dtype=np.float64)
        s = np.asarray(X.sum(axis=1)).ravel()
        inv = np.zeros_like(s)
        nz = s != 0
        inv[nz] = 1.0 / s[nz]
        return sp.csr_array(sp.diags_array(inv) @ X, dtype=dtype)
    X = np.asarray(X)
    if X.ndim != 2:
        raise ValueError(f"features must be 2-D, got shape {X.shape}")
    # a block of rows at a time: no float64 copy of the whole input
    out = np.empty(X.shape, dtype=dtype)
    step = max(1, BLOCK // max(X.shape[1], 1))
    for a in range(0, X.shape[0], step):
        x = np.asarray(X[a:a + step], dtype=np.float64)
        s = x.sum(axis=1)
        inv = np.zeros_like(s)
        nz = s != 0
        inv[nz] = 1.0 / s[nz]
        out[a:a + step] = x * inv[:, None]
    return out


def softmax_rows(Z: np.ndarray) -> np.ndarray:
    """The softmax of every row, in float64.

    Examples
    --------
    >>> softmax_rows(np.zeros((1, 2))).tolist()
    [[0.5, 0.5]]
    """
    z = Z.astype(np.float64)
    z -= z.max(axis=1, keepdims=True)
    np.exp(z, out=z)
    z /= z.sum(axis=1, keepdims=True)
    return z


def forward(weights, biases, X, propagate: Callable, *, dropout: float, dtype, rng=None,
            draw: Callable | None = None, layers: int | None = None):
    """The pre-activations of the first ``layers`` layers (default: all), with what the
    backward needs.

    Parameters
    ----------
    weights, biases : list of ndarray (biases may be None)
        The model's :attr:`graphpar.GCN.weights_` and :attr:`graphpar.GCN.biases_`.
    X : DenseInput or SparseInput (or a rank's rows with the same methods)
    propagate : callable
        ``propagate(S)`` returns a new array ``op @ S`` (for this process's rows).
    dropout : float
        The dropout rate, applied when ``rng`` is given.
    dtype : numpy.dtype
    rng : numpy.random.Generator, optional
        Draws the dropout masks (training mode); None: evaluation mode.
    draw : callable, optional
        ``draw(rng, width)``: this process's rows of a ``(n, width)`` uniform draw
        (default ``rng.random((n, width))``).
    layers : int, optional

    Returns
    -------
    pre : list of ndarray
        ``Z_l`` of each layer (``pre[-1]`` the class scores when all layers run).
    inputs : list
        Each layer's input after dropout (for layer 0 what ``X`` returned).
    masks : list of ndarray or None
        Each hidden layer's scaled dropout mask (None for layer 0 and in evaluation).

    Examples
    --------
    >>> W = [np.ones((2, 3)), np.ones((3, 1))]
    >>> pre, _, _ = forward(W, None, DenseInput(np.eye(2), np.float64), lambda S: S,
    ...                     dropout=0.5, dtype=np.dtype(np.float64))
    >>> pre[-1].ravel().tolist()
    [3.0, 3.0]
    """
    n_layers = len(weights) if layers is None else layers
    keep = 1.0 - dropout
    train = rng is not None and dropout > 0
    pre, inputs, masks = [], [], []
    for layer in range(n_layers):
        W = weights[layer]
        mask = None
        # S is what propagate gathers rows of: on whole cache lines (empty_lines)
        if layer == 0:
            h = X.dropped(rng, keep, dtype) if train else X.plain()
            S = empty_lines((X.shape[0], W.shape[1]), dtype)
            X.matmul(h, W, S)
        else:
            h = np.maximum(pre[-1], 0)
            if train:
                u = rng.random(h.shape) if draw is None else draw(rng, h.shape[1])
                mask = ((u < keep) / keep).astype(dtype)
                h = h * mask
            S = empty_lines((h.shape[0], W.shape[1]), np.result_type(h, W))
            np.matmul(h, W, out=S)
        Z = propagate(S)
        if biases is not None:
            Z += biases[layer]
        pre.append(Z)
        inputs.append(h)
        masks.append(mask)
    return pre, inputs, masks


def cross_entropy(Z: np.ndarray, idx: np.ndarray, y: np.ndarray, count: int, dtype, *,
                  grad: bool = True):
    """Softmax cross-entropy of the rows ``idx`` of ``Z`` (classes ``y``).

    Returns ``(loss_sum, correct, G)``: the summed loss (float64), the number of rows
    whose largest score is their class, and ``d(loss_sum / count) / dZ`` (None
    without ``grad``); ``count`` is the number of rows of the mean over all processes.

    Examples
    --------
    >>> s, c, G = cross_entropy(np.zeros((2, 2)), np.array([0]), np.array([1]), 1, np.float64)
    >>> round(s, 4), c, G.tolist()
    (0.6931, 0, [[0.5, -0.5], [0.0, 0.0]])
    """
    z = Z[idx].astype(np.float64)
    z -= z.max(axis=1, keepdims=True)
    logp = z - np.log(np.exp(z).sum(axis=1, keepdims=True))
    rows = np.arange(idx.size)
    loss_sum = float(-logp[rows, y].sum())
    correct = int(np.count_nonzero(Z[idx].argmax(axis=1) == y))
    if not grad:
        return loss_sum, correct, None
    G = np.zeros_like(Z)
    P = np.exp(logp)
    P[rows, y] -= 1.0
    G[idx] = (P / count).astype(dtype)
    return loss_sum, correct, G


def backward(weights, biases, X, propagate_t: Callable, pre, inputs, masks, G):
    """The gradients of the weights and biases from ``G = dloss/dZ`` of the last layer.

    ``propagate_t(G)`` returns a new array ``op.T @ G``; ``pre``, ``inputs`` and
    ``masks`` come from :func:`forward`. Returns ``(gW, gb)``: the weight gradients
    in the weights' dtype and the bias gradients as float64 column sums (None
    without biases), this process's share when the rows are distributed. No weight
    decay.

    Examples
    --------
    >>> X = DenseInput(np.eye(2), np.float64)
    >>> W = [np.ones((2, 1))]
    >>> pre, inputs, masks = forward(W, None, X, lambda S: S, dropout=0.0, dtype=np.float64)
    >>> gW, gb = backward(W, None, X, lambda G: G, pre, inputs, masks, np.ones((2, 1)))
    >>> gW[0].ravel().tolist(), gb
    ([1.0, 1.0], None)
    """
    n_layers = len(pre)
    gW = [None] * n_layers
    gb = None if biases is None else [None] * n_layers
    for layer in range(n_layers - 1, -1, -1):
        # Z_l = op @ (h_l W_l) + b_l
        if gb is not None:
            gb[layer] = G.sum(axis=0, dtype=np.float64)
        dS = propagate_t(G)
        h = inputs[layer]
        if layer == 0:
            gW[0] = np.empty_like(weights[0])
            X.grad(h, dS, gW[0])
            break
        gW[layer] = h.T @ dS
        dH = dS @ weights[layer].T
        if masks[layer] is not None:
            dH *= masks[layer]
        G = empty_lines(dH.shape, dH.dtype)  # gathered by propagate_t: on whole lines
        np.multiply(dH, pre[layer - 1] > 0, out=G)
    return gW, gb
