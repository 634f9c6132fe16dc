"""Checks of the GCN's options and inputs: one place for what :class:`graphpar.GCN`,
:func:`graphpar.train_gcn`, :func:`graphpar.mpi.train_gcn` and ``graphpar gcn`` accept.

Options (:func:`check_training_options`), features (:func:`check_features`),
labels (:func:`check_labels`), vertex sets (:func:`vertex_mask`), torch tensors
(:func:`from_torch`, never importing torch), the number of classes under the masks
(:func:`count_classes`) and the memory training needs (:func:`check_training_memory`).
"""

from __future__ import annotations

import math
import sys
import warnings
from collections.abc import Sequence
from itertools import pairwise

import numpy as np
import scipy.sparse as sp

from graphpar.limits import check_memory

__all__ = [
    "FLOATS", "as_array", "check_features", "check_labels", "check_training_memory",
    "check_training_options", "count_classes", "from_torch", "integer_option",
    "is_edge_index", "rows_of", "vertex_indices", "vertex_mask", "mask_overlaps", "warn_overlap",
    "warn_unseen_test_classes",
]

FLOATS = (np.dtype(np.float32), np.dtype(np.float64))


# ------------------------------------------------------------------ option checks
def integer_option(value, name: str, lowest: int) -> int:
    """``value`` as an int if it is a whole number >= ``lowest``, else ValueError naming it.

    Examples
    --------
    >>> integer_option(3.0, "epochs", 1)
    3
    """
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
            integer_option(w, f"{name}[{i}]", 1)
        return tuple(int(w) for w in widths)
    return integer_option(value, name, 1)


def _bool(value, name: str) -> bool:
    if not isinstance(value, bool | np.bool_):
        raise ValueError(f"{name} must be True or False, got {value!r}")
    return bool(value)


_CHECKS = {
    "hidden": _hidden,
    "epochs": lambda v, n: integer_option(v, n, 1),
    "early_stopping": lambda v, n: None if v is None else integer_option(v, n, 1),
    # numpy's generators take any non-negative integer and refuse negative ones
    "seed": lambda v, n: integer_option(v, n, 0),
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


def rows_of(X) -> int | None:
    """The number of rows of features ``X`` if it has a 2-D shape, else None.

    Examples
    --------
    >>> rows_of([[1, 2], [3, 4]])
    2
    """
    shape = getattr(X, "shape", None)
    if shape is None:
        try:
            return len(X)
        except TypeError:
            return None
    return int(shape[0]) if len(shape) == 2 else None


def is_edge_index(graph, n: int | None) -> bool:
    """Whether ``graph`` is a (2, E) integer edge list rather than an adjacency matrix.

    Examples
    --------
    >>> is_edge_index(np.array([[0, 1, 2], [1, 2, 0]]), None)
    True
    """
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
    mask = np.zeros(n, bool)
    mask[vertex_indices(m, n, name)] = True
    return mask


def vertex_indices(m: np.ndarray, n: int, name: str) -> np.ndarray:
    """Check ``m`` as a set of vertices given by index: 1-D, integers, distinct, in
    ``[0, n)``; return it. Needs no array of ``n`` entries (under MPI a rank keeps the
    indices of its own rows).

    Examples
    --------
    >>> vertex_indices(np.array([3, 0]), 4, "train").tolist()
    [3, 0]
    >>> vertex_indices(np.array([4]), 4, "train")
    Traceback (most recent call last):
    ...
    ValueError: train lists vertex 4 (position 0), outside [0, 4)
    """
    if m.size == 0 and m.ndim == 1:
        return m.astype(np.int64)
    if m.dtype.kind not in "iu" or m.ndim != 1:
        raise ValueError(f"{name} must be a boolean mask of shape ({n},) or a 1-D array of "
                         f"vertex indices, got {m.dtype} of shape {m.shape}")
    bad = (m < 0) | (m >= n)
    if bad.any():
        k = int(np.argmax(bad))
        raise ValueError(f"{name} lists vertex {int(m[k])} (position {k}), outside [0, {n})")
    order = np.argsort(m, kind="stable")
    s = m[order]
    repeat = s[1:] == s[:-1]
    if repeat.any():
        second = int(order[1:][repeat].min())  # the first repeat, by position
        first = int(np.flatnonzero(m == m[second])[0])
        hint = "; a 0/1 mask must be boolean" if m.size == n and m.max() <= 1 else ""
        raise ValueError(f"{name} lists vertex {int(m[second])} twice (positions {first} and "
                         f"{second}){hint}")
    return m.astype(np.int64, copy=False)



def count_classes(labels: np.ndarray, masks: dict) -> int:
    """One more than the largest label under train or val; refuse a negative label under a mask.

    The test mask (when given) does not add classes: a model's output width
    must not depend on the held-out labels, so ``GCN.fit``, :func:`train_gcn`
    and the CLI build the same model. A test label past the classes gets a
    warning: no model trained on these labels can predict it.

    Examples
    --------
    >>> count_classes(np.array([0, 2, -1]), {"train": np.array([True, True, False])})
    3
    """
    for name, mask in masks.items():
        under = labels[mask]
        if under.size and under.min() < 0:
            v = int(np.flatnonzero(mask & (labels < 0))[0])
            raise ValueError(f"labels under the {name} mask must be >= 0 (class 0, 1, ...), "
                             f"got {int(labels[v])} at vertex {v}")
    if not masks["train"].any():
        raise ValueError("train selects no vertices")
    for (a, b), (count, first) in mask_overlaps(masks).items():
        warn_overlap(a, b, count, first)
    seen = masks["train"] | masks["val"] if masks.get("val") is not None else masks["train"]
    n_classes = int(labels[seen].max()) + 1
    test = masks.get("test")
    if test is not None:
        past = np.flatnonzero(test & (labels >= n_classes))
        if past.size:
            warn_unseen_test_classes(past.size, int(labels[past[0]]), int(past[0]), n_classes)
    return n_classes


def mask_overlaps(masks: dict, offset: int = 0) -> dict:
    """``{(a, b): (count, first vertex)}`` for each pair of masks sharing vertices
    (``offset``: the number of the first row, for one MPI rank's rows).

    Examples
    --------
    >>> mask_overlaps({"train": np.array([1, 1, 0], bool), "val": np.array([0, 1, 1], bool)})
    {('train', 'val'): (1, 1)}
    """
    names = [k for k in ("train", "val", "test") if masks.get(k) is not None]
    out = {}
    for i, a in enumerate(names):
        for b in names[i + 1:]:
            both = np.flatnonzero(masks[a] & masks[b])
            if both.size:
                out[(a, b)] = (int(both.size), offset + int(both[0]))
    return out


def warn_overlap(a: str, b: str, count: int, first: int) -> None:
    """Warn that masks ``a`` and ``b`` share ``count`` vertices (the first: ``first``)."""
    warnings.warn(f"the {a} and {b} masks share {count} vertices (the first: vertex {first}): "
                  f"the {b} accuracy is then measured partly on vertices the model "
                  f"{'trained on' if a == 'train' else 'was validated on'}",
                  UserWarning, stacklevel=4)


def warn_unseen_test_classes(count: int, label: int, vertex: int, n_classes: int) -> None:
    """Warn that ``count`` test vertices (the first: ``vertex``, with ``label``) have a label
    past the classes of train and val."""
    warnings.warn(f"{count} test vertices have a label no train or val vertex has (the first: "
                  f"label {label} at vertex {vertex}; the classes are 0..{n_classes - 1}): "
                  "the model cannot predict them", UserWarning, stacklevel=4)


def check_training_memory(dtype, hidden, n: int, f: int, n_classes: int) -> None:
    """Refuse (:class:`graphpar.errors.LimitError`) training that needs more memory than
    :func:`graphpar.limits.check_memory` allows.

    Examples
    --------
    >>> check_training_memory(np.float32, (16,), 100, 10, 3)
    """
    # about ten layer-wide arrays per vertex (activations, masks, gradients) and four
    # weight-sized ones (weights, gradient, Adam's two moments)
    widths = (f, *hidden, n_classes)
    per_vertex = 10 * sum(widths[1:])
    weights = 4 * sum(a * b for a, b in pairwise(widths))
    check_memory(
        np.dtype(dtype).itemsize * (n * per_vertex + weights),
        what=f"training a GCN with hidden={tuple(hidden)} on {n} vertices, {f} features "
        f"and {n_classes} classes (one more than the largest train or val label)",
    )
