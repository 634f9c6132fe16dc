"""GCN model files: :meth:`graphpar.GCN.save` and :meth:`graphpar.GCN.load`.

A model file is an ``.npz`` holding ``config`` (the hyperparameters, the format
name and version, the input width and the number of classes, as JSON) and
``weight_<l>`` (and ``bias_<l>``) for every layer: nothing that needs pickle,
no graph, features or history. Loading checks every array's header (shape,
dtype) against the configuration before reading it
(:func:`graphpar.io.npy_header`), and every weight must be finite.
"""

from __future__ import annotations

import json
import math
import os
import zipfile
from itertools import pairwise

import numpy as np

from graphpar._gcn_checks import integer_option
from graphpar.io._npy import npy_header
from graphpar.limits import check_memory

__all__ = ["MODEL_FORMAT", "MODEL_VERSION", "load_model", "save_model"]

# What GCN.save writes: the format name and version in the stored configuration.
MODEL_FORMAT = "graphpar.GCN"
MODEL_VERSION = 1


def save_model(model, path) -> None:
    """What :meth:`graphpar.GCN.save` does: write ``model``'s weights and configuration
    to ``path`` (an ``.npz``), atomically.

    Nothing else is stored (no graph, features or history), and nothing
    in the file needs pickle: :func:`load_model` reads it with
    ``numpy.load(path, allow_pickle=False)``.

    Examples
    --------
    >>> import os, tempfile, graphpar
    >>> path = os.path.join(tempfile.mkdtemp(), "model.npz")
    >>> graphpar.GCN(hidden=(4,)).init_weights(3, 2).save(path)
    >>> graphpar.GCN.load(path).weights_[0].shape
    (3, 4)
    """
    from graphpar.io import atomic_write

    model._check_fitted()
    config = dict(model.get_config(), hidden=list(model.hidden), format=MODEL_FORMAT,
                  version=MODEL_VERSION, n_features=model.n_features_in_,
                  n_classes=model.n_classes_)
    arrays = {"config": np.array(json.dumps(config))}
    for layer, W in enumerate(model.weights_):
        arrays[f"weight_{layer}"] = W
        if model.biases_ is not None:
            arrays[f"bias_{layer}"] = model.biases_[layer]
    with atomic_write(path, "wb") as f:
        np.savez(f, **arrays)


def load_model(cls, path):
    """What :meth:`graphpar.GCN.load` does: a ``cls`` (:class:`graphpar.GCN`) from a model file
    written by :func:`save_model` (no pickle involved).

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
    >>> import os, tempfile, graphpar
    >>> path = os.path.join(tempfile.mkdtemp(), "model.npz")
    >>> graphpar.GCN(hidden=(8, 4), seed=3).init_weights(5, 2).save(path)
    >>> load_model(graphpar.GCN, path).hidden
    (8, 4)
    """
    name = os.fspath(path)
    with open(name, "rb") as f:
        head = f.read(6)
    # np.load reads any file that is neither a zip archive nor an .npy array as a pickle,
    # and its refusal would suggest loading the file unsafely
    if not head.startswith(b"PK"):
        what = ("a single array, not an .npz archive" if head.startswith(b"\x93NUMPY")
                else f"not an .npz archive: it starts with {head!r}")
        raise ValueError(f"{name}: not a model written by GCN.save ({what})")
    try:
        npz = np.load(name, allow_pickle=False)
    except (ValueError, EOFError, zipfile.BadZipFile) as exc:
        raise ValueError(f"{name}: not a model written by GCN.save ({exc})") from None
    with npz:
        try:
            return _from_npz(cls, npz)
        except _ModelFileError as exc:
            raise ValueError(f"{name}: {exc}") from None
        except (ValueError, EOFError, zipfile.BadZipFile) as exc:
            raise ValueError(f"{name}: not a model written by GCN.save ({exc})") from None


def _from_npz(cls, npz):
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
        n_features = integer_option(config["n_features"], "n_features", 1)
        n_classes = integer_option(config["n_classes"], "n_classes", 1)
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
            entry = tuple(int(i) for i in np.unravel_index(k, arr.shape))
            raise _ModelFileError(f"'{key}' contains {arr.flat[k]} (entry {entry})")
        arrays[key] = arr
    model.weights_ = [arrays[f"weight_{i}"] for i in range(model.n_layers)]
    model.biases_ = ([arrays[f"bias_{i}"] for i in range(model.n_layers)] if model.bias
                     else None)
    return model


class _ModelFileError(Exception):
    """What is wrong with a model file (prefixed with its name by GCN.load)."""



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
