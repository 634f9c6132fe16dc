"""``graphpar gcn``: train a GCN (two layers by default, any depth with ``--hidden 64,32``,
biases unless ``--no-bias``) on a Planetoid data set, a generated SBM graph, or the
user's own graph, features, labels and split.

Serially the model trains with :func:`graphpar.train_gcn` (the model of
``graphpar.GCN(hidden=..., bias=...)``). Under ``mpiexec``
with ``--dataset`` every rank loads the data (Planetoid graphs are small; rank 0
first, so that it alone downloads), the vertices are partitioned with
``--partition`` (``metis`` by default when ``pymetis`` is installed, else
``block``); with ``--graph`` each rank reads only its vertex range of the graph
and its rows of the features, labels and split (:func:`load_user_rows`;
``--partition`` block or edge, default edge). The model trains with
:func:`graphpar.mpi.train_gcn`; rank 0 prints the serial report plus the
partition, the halo of one feature column and the bytes sent per epoch, and
writes the output files (``--save-model`` an ``.npz``, ``--output`` an ``.npy``,
``--history`` a ``.csv``, ``--plot`` a ``.png``: a name that ends otherwise is refused
before any work, :data:`OUTPUT_SUFFIXES`), each atomically.
"""

from __future__ import annotations

import argparse
import importlib.util
import os

DATASETS = ("cora", "citeseer", "pubmed", "sbm")
ENV_PARTITION = "GRAPHPAR_PARTITION"
# Demo pass marks: Cora within 3.5 points of the paper's 81.5%; the SBM far above
# chance (1/7) and above what the flipped indicator features alone allow (about 57%).
DEMO_CORA_MIN = 0.78
DEMO_SBM_MIN = 0.75
# What each output file holds, so the name it must end in (any case; the driver's
# check_output_paths refuses another before any work, as it does a --plot not named .png).
OUTPUT_SUFFIXES = {
    "output": ((".npy",), "the predictions are written as an int64 .npy array"),
    "save_model": ((".npz",), "the model is written as an .npz archive that "
                              "graphpar.GCN.load reads"),
    "history": ((".csv",), "the history is written as CSV"),
}


def hidden_widths(text: str):
    """``--hidden``: one width (an int) or a comma-separated list of them (a tuple); whether
    they are positive is :func:`check_args`'s to say.

    Examples
    --------
    >>> hidden_widths("16"), hidden_widths("64,32")
    (16, (64, 32))
    >>> hidden_widths("64,x")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: must be a positive integer or a comma-separated list ...
    """
    parts = [p.strip() for p in str(text).split(",")]
    try:
        widths = [int(p) for p in parts]
    except ValueError:
        widths = None
    if widths is None:  # the values themselves are checked with the other options
        raise argparse.ArgumentTypeError(
            f"must be a positive integer or a comma-separated list of them (64,32), got {text!r}")
    return widths[0] if len(widths) == 1 else tuple(widths)


def register(sub) -> None:
    """Add the ``gcn`` subcommand to ``sub``."""
    from graphpar.cli._driver import add_shared_options
    from graphpar.mpi.partition_methods import METHODS

    p = sub.add_parser(
        "gcn",
        help="train a graph convolutional network (Kipf and Welling) and report its accuracy",
        description=(
            "Train a GCN full batch (two layers by default, more with --hidden 64,32; Adam, "
            "dropout, weight decay on the first layer) and print the train, validation and "
            "test accuracy and the time. The "
            "data is a Planetoid citation graph with its public split, a generated "
            "stochastic-block-model graph (--dataset sbm), or your own: --graph with "
            "--features, --labels and --split. Planetoid files are read from --data-dir, "
            "else $GRAPHPAR_DATA, else ~/.cache/graphpar (in a planetoid/ subfolder or "
            "directly), and downloaded there when missing (verified against the project's "
            "SHA-256 sums). Progress goes to stderr: a live bar on a terminal, a plain line "
            "every few seconds in a log, nothing with --quiet. Each output file's name "
            "must end in the format written there (in any case): -o FILE.npy, --save-model "
            "FILE.npz, --history FILE.csv, --plot FILE.png; another name is refused before "
            "any work."
        ),
    )
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument("--dataset", choices=DATASETS, help="a Planetoid data set, or sbm")
    src.add_argument("--graph", metavar="FILE",
                     help="your graph: any file graphpar.read_graph reads (.gr, .mtx, .el, "
                          ".wel, .npz; compressed or not), one vertex per row of --features")
    p.add_argument("--features", metavar="FILE",
                   help="with --graph: the features, an (n, f) .npy array or a scipy sparse "
                        ".npz (scipy.sparse.save_npz); rows are scaled to sum 1")
    p.add_argument("--labels", metavar="FILE",
                   help="with --graph: the integer class of every vertex, an (n,) .npy "
                        "array (-1, or any negative value, for unlabelled vertices)")
    p.add_argument("--split", metavar="FILE",
                   help="with --graph: an .npz holding 'train' and optionally 'val' and "
                        "'test', each a boolean mask of shape (n,) or an array of vertex "
                        "indices")
    p.add_argument("--undirected", action="store_true",
                   help="with --graph: store every edge of the file both ways")
    p.add_argument("--data-dir", metavar="DIR", default=None,
                   help="folder holding the Planetoid files (default: $GRAPHPAR_DATA, "
                        "then ~/.cache/graphpar)")
    p.add_argument("--no-download", action="store_true",
                   help="fail instead of downloading missing Planetoid files")
    p.add_argument("--epochs", type=int, default=200, help="training epochs (default 200)")
    p.add_argument("--hidden", type=hidden_widths, default=16, metavar="W[,W...]",
                   help="hidden units: one width (default 16), or a comma-separated width "
                        "per hidden layer for a deeper model (64,32: three layers)")
    p.add_argument("--bias", action=argparse.BooleanOptionalAction, default=True,
                   help="add a bias to every layer, as graphpar.GCN does (default); "
                        "--no-bias for Kipf and Welling's model without biases")
    p.add_argument("--lr", type=float, default=0.01, help="Adam learning rate (default 0.01)")
    p.add_argument("--dropout", type=float, default=0.5, help="dropout rate (default 0.5)")
    p.add_argument("--weight-decay", type=float, default=5e-4,
                   help="L2 weight decay on the first layer (default 5e-4)")
    p.add_argument("--early-stopping", type=int, default=None, metavar="N",
                   help="stop when the validation loss exceeds the mean of the previous N "
                        "epochs (default: off)")
    p.add_argument(
        "--partition", default=None, choices=METHODS,
        help="under mpiexec: how vertices are split across ranks (default: "
        f"${ENV_PARTITION}, else metis when pymetis is installed, else block; metis and "
        "hypergraph need graphpar[partition]). With --graph each rank reads its own "
        "vertex range: block or edge (default edge)",
    )
    p.add_argument("--save-model", metavar="FILE.npz",
                   help="write the trained model (weights and configuration) to FILE.npz, "
                        "an .npz archive that graphpar.GCN.load reads")
    p.add_argument("--history", metavar="FILE.csv",
                   help="write the loss and accuracies of every epoch to FILE.csv (CSV)")
    add_shared_options(p, seed=True, json=True,
                       plot="the loss and accuracy per epoch to FILE.png",
                       output="the predicted class of every vertex (an int64 .npy array)",
                       output_metavar="FILE.npy")
    p.set_defaults(func=run, output_suffixes=OUTPUT_SUFFIXES)


def load(name: str, data_dir=None, download: bool = True, seed: int = 0):
    """The data set ``name``: a Planetoid name, or ``"sbm"`` (a generated one).

    ``"sbm"`` is :func:`graphpar.datasets.synthetic_sbm` with ``seed``.

    Examples
    --------
    >>> load("sbm", seed=1).num_classes
    7
    """
    from graphpar import datasets

    if name == "sbm":
        return datasets.synthetic_sbm(seed)
    return datasets.load_planetoid(name, root=data_dir, download=download)


def partition_method(args) -> str:
    """The partitioner: ``args.partition``, else ``$GRAPHPAR_PARTITION``, else
    ``metis`` when pymetis is installed, else ``block``.

    Examples
    --------
    >>> import argparse
    >>> partition_method(argparse.Namespace(partition="hypergraph"))
    'hypergraph'
    """
    from graphpar.mpi.partition_methods import METHODS

    method = getattr(args, "partition", None) or os.environ.get(ENV_PARTITION, "").strip()
    if not method:
        method = "metis" if importlib.util.find_spec("pymetis") else "block"
    if method not in METHODS:
        raise ValueError(f"{ENV_PARTITION} must be one of {', '.join(METHODS)}; got {method!r}")
    return method


# The numeric options and the train_gcn parameters they set.
_OPTIONS = ("epochs", "hidden", "lr", "dropout", "weight_decay", "early_stopping", "seed",
            "bias")


def check_args(args) -> None:
    """Refuse a meaningless option, or a meaningless combination, with one line naming it.

    Examples
    --------
    >>> import argparse
    >>> check_args(argparse.Namespace(epochs=200, hidden=16, lr=0.0, dropout=0.5,
    ...     weight_decay=5e-4, early_stopping=None, seed=0, bias=True))
    Traceback (most recent call last):
    ...
    ValueError: --lr must be a finite number > 0, got 0.0
    """
    from graphpar._gcn_checks import check_training_options

    check_training_options(
        {key: "--" + key.replace("_", "-") for key in _OPTIONS},
        **{key: getattr(args, key, True) for key in _OPTIONS},
    )
    user = {opt: getattr(args, opt, None) for opt in _USER_FILES}
    if getattr(args, "graph", None) is not None:
        missing = [f"--{opt}" for opt, value in user.items() if value is None]
        if missing:
            raise ValueError(f"--graph needs {', '.join(missing)} too")
    else:
        given = [f"--{opt}" for opt, value in user.items() if value is not None]
        if getattr(args, "undirected", False):
            given.append("--undirected")
        if given:
            raise ValueError(f"{', '.join(given)} go with --graph, not --dataset")
    from graphpar.cli._driver import check_output_paths

    check_output_paths(args)


_USER_FILES = ("features", "labels", "split")


def _load_npy(path: str, what: str, kinds: str = "biuf"):
    """An array from ``path`` without pickle, memory-mapped, after
    :func:`graphpar.io.check_npy` (a header that declares more than the file holds is
    refused, never allocated)."""
    import numpy as np

    from graphpar.io import check_npy

    check_npy(path, what, kinds=kinds)
    try:
        return np.load(path, mmap_mode="r", allow_pickle=False)
    except (ValueError, EOFError) as exc:
        raise ValueError(f"{path}: not an .npy file saved with numpy.save ({exc})") from None


def read_features(path: str, n: int):
    """The feature matrix in ``path`` (``.npy`` or a scipy sparse ``.npz``), checked for ``n`` rows.

    An ``.npz`` is read by :func:`graphpar.io._npy.load_sparse_npz`, as the per-rank reader
    reads a format other than CSR: opened once, its members checked from their headers (a
    file that is no zip archive, holds no ``format`` and ``shape``, Python objects or less
    data than a header declares is refused, naming the file, before anything is
    allocated), then read by :func:`scipy.sparse.load_npz`.

    Examples
    --------
    >>> import numpy as np, os, tempfile
    >>> f = os.path.join(tempfile.mkdtemp(), "X.npy")
    >>> np.save(f, np.ones((3, 2)))
    >>> read_features(f, 3).shape
    (3, 2)
    >>> f = os.path.join(os.path.dirname(f), "X.npz")
    >>> np.savez(f, X=np.ones((3, 2)))
    >>> read_features(f, 3)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: ...X.npz: not a scipy sparse matrix saved with scipy.sparse.save_npz (it holds X)
    """
    from graphpar._gcn_checks import check_features
    from graphpar.io._npy import load_sparse_npz

    if path.endswith(".npz"):
        X = load_sparse_npz(path)
    else:
        X = _load_npy(path, "features", kinds="biufc")
    return check_features(X, n, path)


def read_labels(path: str, n: int):
    """The labels in ``path`` (``.npy``): ``n`` integers.

    Examples
    --------
    >>> import numpy as np, os, tempfile
    >>> f = os.path.join(tempfile.mkdtemp(), "y.npy")
    >>> np.save(f, np.array([0, 1, -1]))
    >>> read_labels(f, 3).tolist()
    [0, 1, -1]
    """
    import numpy as np

    from graphpar._gcn_checks import check_labels

    return np.array(check_labels(_load_npy(path, "labels", kinds="biufc"), n, path))


def read_split(path: str, n: int) -> dict:
    """The ``train``, ``val`` and ``test`` masks in the ``.npz`` at ``path`` (boolean masks or
    vertex indices; ``val`` and ``test`` may be absent).

    Examples
    --------
    >>> import numpy as np, os, tempfile
    >>> f = os.path.join(tempfile.mkdtemp(), "split.npz")
    >>> np.savez(f, train=[0, 1], test=np.array([False, False, True]))
    >>> {k: m.tolist() for k, m in read_split(f, 3).items()}
    {'train': [True, True, False], 'val': [False, False, False], 'test': [False, False, True]}
    """
    masks = read_split_rows(path, n, 0, n)
    if not masks["train"].any():
        raise ValueError(f"{path}: 'train' selects no vertices")
    return masks


def read_split_rows(path: str, n: int, lo: int, hi: int) -> dict:
    """The rows ``lo:hi`` of the ``train``, ``val`` and ``test`` masks in the ``.npz`` at
    ``path``, without the rest: a boolean mask is read for those rows only (a compressed
    archive is decompressed as a stream); an array of vertex indices is read whole
    (its size is that of the set, at most ``n``) and checked whole, so every rank
    raises the same error. Whether ``train`` selects any vertex is the caller's to
    check (:func:`read_split` does; under MPI :func:`load_user_rows` sums over the ranks).

    Examples
    --------
    >>> import numpy as np, os, tempfile
    >>> f = os.path.join(tempfile.mkdtemp(), "split.npz")
    >>> np.savez(f, train=[0, 3], test=np.array([False, False, True, True]))
    >>> {k: m.tolist() for k, m in read_split_rows(f, 4, 2, 4).items()}
    {'train': [False, True], 'val': [False, False], 'test': [True, True]}
    """
    import zipfile

    import numpy as np

    from graphpar._gcn_checks import vertex_indices
    from graphpar.io._npy import npz_member, read_npz_slice

    try:
        zf = zipfile.ZipFile(path)
    except (zipfile.BadZipFile, EOFError, ValueError) as exc:
        raise ValueError(f"{path}: not an .npz archive saved with numpy.savez ({exc})") from None
    with zf:
        names = {m[:-4] if m.endswith(".npy") else m for m in zf.namelist()}
        unknown = sorted(names - {"train", "val", "test"})
        if unknown or "train" not in names:
            has = ", ".join(repr(k) for k in sorted(names)) or "nothing"
            raise ValueError(f"{path}: needs 'train' and optionally 'val' and 'test' (boolean "
                             f"masks or vertex indices), and nothing else; it holds {has}")
        masks = {}
        for key in ("train", "val", "test"):
            masks[key] = np.zeros(hi - lo, bool)
            if key not in names:
                continue
            name = f"{path}: '{key}'"
            shape, dtype, _ = npz_member(zf, key, path,
                                         most=(n, f"the {n} vertices of the graph"))
            try:
                if dtype.kind == "b":
                    if shape != (n,):
                        raise ValueError(f"{name} must have shape ({n},) as a boolean mask, "
                                         f"got shape {shape}")
                    masks[key] = read_npz_slice(zf, key, lo, hi, path)
                    continue
                with zf.open(key + ".npy") as fp:
                    value = np.lib.format.read_array(fp, allow_pickle=False)
            except (EOFError, zipfile.BadZipFile, OSError) as exc:
                raise ValueError(f"{name} cannot be read ({exc})") from None
            idx = vertex_indices(value, n, name)
            masks[key][idx[(idx >= lo) & (idx < hi)] - lo] = True
    return masks


def refuse_named_vertices(path: str, labels) -> None:
    """Refuse a graph whose vertices have names (string or relabelled ids, ``labels``).

    Row ``i`` of ``--features``, ``--labels`` and ``--split`` is vertex number
    ``i``; a named vertex's number is the order in which its name first
    appears in the file, which no user means, so pairing them would silently
    train on shuffled rows.

    Examples
    --------
    >>> refuse_named_vertices("g.el", None)
    >>> refuse_named_vertices("g.csv", ["v7", "v3"])  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: g.csv names its vertices ('v7', 'v3'): ...
    """
    if labels is None:
        return
    shown = ", ".join(repr(str(v)) for v in list(labels[:3]))
    raise ValueError(f"{path} names its vertices ({shown}{', ...' if len(labels) > 3 else ''}): "
                     "row i of --features, --labels and --split is vertex number i, so the "
                     "rows cannot be paired with names; write the graph with vertex numbers "
                     "0..n-1 (as --features orders its rows)")


class UserData:
    """The user's graph, features, labels and split (what ``--graph`` reads), shaped like a
    :class:`graphpar.datasets.Planetoid` for :func:`graphpar.train_gcn`."""

    def __init__(self, adjacency, features, labels, masks: dict):
        self.adjacency = adjacency
        self.features = features
        self.labels = labels
        self.train_mask, self.val_mask, self.test_mask = (masks[k] for k in ("train", "val",
                                                                              "test"))


def load_user_data(args) -> UserData:
    """Read ``--graph``, ``--features``, ``--labels`` and ``--split`` and check them together.

    Every error is one line naming the file and what is wrong.

    Examples
    --------
    >>> data = load_user_data(args)  # doctest: +SKIP
    >>> data.adjacency.shape[0] == data.features.shape[0]  # doctest: +SKIP
    True
    """
    import numpy as np

    from graphpar.io import read_graph

    g = read_graph(args.graph, directed=False if args.undirected else None)
    refuse_named_vertices(args.graph, g.labels)
    n = g.shape[0]
    X = read_features(args.features, n)
    y = read_labels(args.labels, n)
    masks = read_split(args.split, n)
    for key, mask in masks.items():
        bad = np.flatnonzero(mask & (y < 0))
        if bad.size:
            v = int(bad[0])
            raise ValueError(f"{args.labels}: vertex {v} has label {int(y[v])} but is in "
                             f"'{key}' of {args.split} (every vertex of a split needs a "
                             "class >= 0)")
    return UserData(g, X, y, masks)


class UserRows:
    """This rank's share of the user's data under MPI (what ``--graph`` reads there): its
    rows of the graph (a :class:`graphpar.mpi.DistGraph`), the features, labels and masks."""

    def __init__(self, graph, features, labels, masks: dict):
        self.graph = graph
        self.features = features
        self.labels = labels
        self.masks = tuple(masks[k] for k in ("train", "val", "test"))


# --graph under mpiexec: each rank reads its contiguous vertex range, so only the
# partitions into ranges apply
ROW_PARTITIONS = ("block", "edge")


def rows_partition_method(args, warn: bool = True) -> str:
    """The partition of ``--graph`` under MPI: ``--partition`` (block or edge), else
    ``$GRAPHPAR_PARTITION`` when it names one of those, else ``edge`` (with a warning,
    when ``warn``, if ``$GRAPHPAR_PARTITION`` names another).

    Examples
    --------
    >>> import argparse
    >>> rows_partition_method(argparse.Namespace(partition=None))
    'edge'
    """
    method = getattr(args, "partition", None)
    if method is None:
        env = os.environ.get(ENV_PARTITION, "").strip()
        if env and env not in ROW_PARTITIONS and warn:
            import warnings

            warnings.warn(f"{ENV_PARTITION}={env} needs the whole graph on one rank; with "
                          "--graph under mpiexec each rank reads its own vertex range, so the "
                          "partition is edge (set --partition block or edge to choose)",
                          UserWarning, stacklevel=2)
        return env if env in ROW_PARTITIONS else "edge"
    if method not in ROW_PARTITIONS:
        raise ValueError(f"--partition {method} needs the whole graph on one rank; with --graph "
                         f"under mpiexec each rank reads its own vertex range: use "
                         f"{' or '.join(ROW_PARTITIONS)}")
    return method


def load_user_rows(args, ctx, method: str) -> UserRows:
    """Read this rank's rows of ``--graph``, ``--features``, ``--labels`` and ``--split``.
    Collective; no rank reads the whole graph or the whole ``.npy`` features.

    The graph is read in parallel (:func:`graphpar.mpi.read_graph`), in equal vertex
    blocks, then with ``method="edge"`` moved to ranges of equal edges; each rank then
    reads its rows of the ``.npy`` features and labels
    (:func:`graphpar.mpi.features.read_rows`), of features in a scipy sparse CSR ``.npz``
    (:func:`graphpar.mpi.features.read_sparse_rows`; another sparse format is read
    whole) and of the split's boolean masks (:func:`read_split_rows`; a split given
    as vertex indices is read whole, its size that of the set).

    Examples
    --------
    >>> rows = load_user_rows(args, ctx, "edge")  # under mpiexec  # doctest: +SKIP
    """
    import numpy as np

    from graphpar.mpi import read_graph
    from graphpar.mpi.features import check_feature_rows, read_rows, read_sparse_rows

    dg = read_graph(args.graph, directed=False if args.undirected else None,
                    weights="finite", comm=ctx.comm)
    ctx.collectively(lambda: refuse_named_vertices(args.graph, dg.labels))
    if method == "edge":
        dg = dg.redistribute(dg.edge_balanced_partition())
    n, lo, hi = dg.gn, dg.lo, dg.hi

    def read():
        if args.features.endswith(".npz"):
            X = read_sparse_rows(args.features, lo, hi, n)
        else:
            X = read_rows(args.features, lo, hi, n, what="features")
        X = check_feature_rows(X, lo, args.features)  # errors name the file, as serially
        y = read_rows(args.labels, lo, hi, n, ndim=1, what="labels",
                      kinds="iu").astype(np.int64)
        masks = read_split_rows(args.split, n, lo, hi)
        for key, mask in masks.items():
            bad = np.flatnonzero(mask & (y < 0))
            if bad.size:
                v = int(bad[0])
                raise ValueError(f"{args.labels}: vertex {lo + v} has label {int(y[v])} but is "
                                 f"in '{key}' of {args.split} (every vertex of a split needs a "
                                 "class >= 0)")
        return UserRows(dg, X, y, masks)

    rows = ctx.collectively(read)
    trained = ctx.comm.allreduce(int(rows.masks[0].sum()))

    def some_training():
        if trained == 0:
            raise ValueError(f"{args.split}: 'train' selects no vertices")

    ctx.collectively(some_training)
    return rows


def _load_data(args, ctx, method: str | None = None):
    """The data on every rank: a Planetoid rank 0 first (and downloads when allowed), then
    the others; the user's files (``--graph``) on every rank at once: serially whole, under
    MPI each rank its rows (:func:`load_user_rows`)."""
    if args.graph is not None:
        if ctx.mpi:
            return load_user_rows(args, ctx, method)
        return ctx.collectively(lambda: load_user_data(args))

    def load_here(first: bool):
        if ctx.is_root != first:
            return None
        return load(args.dataset, args.data_dir, download=first and not args.no_download,
                    seed=args.seed)

    data = ctx.collectively(lambda: load_here(True))
    if ctx.mpi:
        rest = ctx.collectively(lambda: load_here(False))
        data = data if ctx.is_root else rest
    return data


def _train(args, data, ctx, *, progress: bool, method: str | None = None):
    """Train on ``data`` with the options in ``args``: serially, or across the ranks."""
    options = dict(hidden=args.hidden, epochs=args.epochs, lr=args.lr, dropout=args.dropout,
                   weight_decay=args.weight_decay, early_stopping=args.early_stopping,
                   seed=args.seed, progress=progress, bias=getattr(args, "bias", True))
    if not ctx.mpi:
        from graphpar import train_gcn

        return train_gcn(data, **options)
    from graphpar.mpi import train_gcn

    if isinstance(data, UserRows):
        return ctx.collectively(lambda: train_gcn(data.graph, data.features, data.labels,
                                                  *data.masks, method=method, comm=ctx.comm,
                                                  **options))
    return ctx.collectively(lambda: train_gcn(data, method=method, comm=ctx.comm, **options))


def write_history(history: dict, path: str) -> None:
    """Write the per-epoch history as CSV (``epoch,loss,train_accuracy,val_loss,val_accuracy``),
    atomically.

    Examples
    --------
    >>> import os, tempfile
    >>> f = os.path.join(tempfile.mkdtemp(), "h.csv")
    >>> write_history({"loss": [1.5], "train_accuracy": [0.5], "val_loss": [float("nan")],
    ...                "val_accuracy": [float("nan")]}, f)
    >>> open(f).read().splitlines()
    ['epoch,loss,train_accuracy,val_loss,val_accuracy', '1,1.5,0.5,nan,nan']
    """
    import csv

    from graphpar.io import atomic_write

    keys = ("loss", "train_accuracy", "val_loss", "val_accuracy")
    with atomic_write(path, "w", newline="") as f:
        out = csv.writer(f)
        out.writerow(("epoch", *keys))
        for i, row in enumerate(zip(*(history[k] for k in keys), strict=True), start=1):
            out.writerow((i, *(repr(float(v)) for v in row)))


def write_outputs(args, data, res, ctx) -> None:
    """Write ``--save-model``, ``--output``, ``--history`` and ``--plot`` on rank 0, atomically."""
    import numpy as np

    from graphpar.io import atomic_write

    model = res.model
    if args.save_model:
        ctx.write(lambda: model.save(args.save_model))
    if args.output and isinstance(data, UserRows):
        from graphpar.mpi import predict_rows

        local = ctx.collectively(lambda: predict_rows(model, data.graph, data.features))
        pred = data.graph.gather_vertex_values(local)
        ctx.write(lambda f: np.save(f, pred), args.output)
    elif args.output:
        def save_predictions():
            pred = model.predict(data.adjacency, data.features)
            with atomic_write(args.output, "wb") as f:
                np.save(f, pred)

        ctx.write(save_predictions)
    if args.history:
        ctx.write(lambda: write_history(res.history, args.history))
    if args.plot:
        def plot():
            from graphpar.plot import training_curves

            training_curves(res.history, args.plot)

        ctx.write(plot)


def report_fields(args, data, res, threads: int) -> dict:
    """The fields of the ``graphpar gcn`` report (also its ``--json`` object).

    Examples
    --------
    >>> report_fields(args, data, res, 2)["test_accuracy"]  # doctest: +SKIP
    0.82
    """
    if isinstance(data, UserRows):
        vertices, edges = data.graph.gn, data.graph.gnnz
    else:
        vertices, edges = data.adjacency.shape[0], data.adjacency.nnz
    return {
        "dataset": args.dataset or args.graph,
        "vertices": int(vertices),
        "stored_edges": int(edges),
        "features": int(data.features.shape[1]),
        "classes": res.model.n_classes_,
        "train_accuracy": res.train_accuracy,
        "val_accuracy": res.val_accuracy,
        "test_accuracy": res.test_accuracy,
        "epochs": res.epochs,
        "seconds": res.seconds,
        "ms_per_epoch": 1000.0 * res.seconds / max(res.epochs, 1),
        "threads": threads,
        "seed": args.seed,
    }


def _mpi_fields(stats) -> dict:
    """The report fields of a :class:`graphpar.mpi.GCNMPIStats` (``TrainResult.mpi``)."""
    return {
        "ranks": stats.ranks,
        "partition": stats.method,
        "exchange": stats.mode,
        "halo_rows_total": stats.halo_rows,
        "halo_rows_largest": stats.halo.largest_rows,
        "halo_bytes_per_epoch": int(stats.halo_bytes_per_epoch),
        "allreduce_bytes_per_epoch": int(stats.allreduce_bytes_per_epoch),
    }


def print_report(args, out: dict) -> None:
    """Print the human-readable ``graphpar gcn`` report from :func:`report_fields`.

    With the MPI fields (``ranks`` ...) one more line gives the partition and
    the bytes exchanged.

    Examples
    --------
    >>> print_report(args, report_fields(args, data, res, 2))  # doctest: +SKIP
    GCN on cora: 2708 vertices, 10556 stored edges, 1433 features, 7 classes
    """
    print(
        f"GCN on {out['dataset']}: {out['vertices']} vertices, {out['stored_edges']} stored "
        f"edges, {out['features']} features, {out['classes']} classes"
    )
    print(
        f"hidden {_widths(args.hidden)}{'' if getattr(args, 'bias', True) else ', no bias'}, "
        f"lr {args.lr}, dropout {args.dropout}, weight decay "
        f"{args.weight_decay}, seed {args.seed}, {out['threads']} threads"
    )
    print(
        f"{out['epochs']} epochs in {out['seconds']:.2f} s ({out['ms_per_epoch']:.2f} ms/epoch)"
    )
    print(f"train accuracy {out['train_accuracy']:.4f}")
    print(f"val accuracy   {out['val_accuracy']:.4f}")
    print(f"test accuracy  {out['test_accuracy']:.4f}")
    if "ranks" in out:
        print(f"{out['ranks']} ranks, partition {out['partition']} ({out['exchange']} "
              f"exchange): halo {out['halo_rows_total']} rows in total, at most "
              f"{out['halo_rows_largest']} per rank; {_fmt(out['halo_bytes_per_epoch'])} of "
              f"halo rows (all ranks) and {_fmt(out['allreduce_bytes_per_epoch'])} of "
              "gradients (per rank) per epoch")


def _widths(hidden) -> str:
    return ",".join(map(str, hidden)) if isinstance(hidden, tuple) else str(hidden)


def _fmt(b: float) -> str:
    for unit, size in (("MiB", 2**20), ("KiB", 2**10)):
        if b >= size:
            return f"{b / size:.1f} {unit}"
    return f"{int(b)} B"


def run(args, ctx) -> int:
    """Run ``graphpar gcn`` in the context ``ctx`` (serial or one MPI rank); return 0."""
    ctx.collectively(lambda: check_args(args))
    method = None
    if ctx.mpi:
        if args.graph is not None:
            method = ctx.collectively(lambda: rows_partition_method(args, warn=ctx.is_root))
        else:
            method = ctx.collectively(lambda: partition_method(args))
    data, load_s = ctx.timed(lambda: _load_data(args, ctx, method))
    if not ctx.as_json:
        ctx.print(f"loaded {args.dataset or args.graph} in {load_s:.2f} s")
    res = _train(args, data, ctx, progress=_shows_progress(args, ctx), method=method)
    write_outputs(args, data, res, ctx)
    fields = report_fields(args, data, res, ctx.threads)
    if res.mpi is not None:
        fields.update(_mpi_fields(res.mpi))
    ctx.report(fields, lambda out: print_report(args, out))
    return 0


def _shows_progress(args, ctx) -> bool:
    """Progress on rank 0 unless ``--quiet`` (on stderr: the report and ``--json`` stay clean)."""
    shows = getattr(ctx, "shows_progress", None)
    if shows is not None:
        return bool(shows)
    return ctx.is_root and not getattr(args, "quiet", False)


def demo(args) -> bool:
    """The GCN step of ``graphpar demo``: Cora from GRAPHPAR_DATA, else a generated SBM."""
    import argparse

    from graphpar.cli._driver import Context
    from graphpar.datasets import load_planetoid
    from graphpar.threads import get_threads

    seed = getattr(args, "seed", 0)
    data, name, mark = None, "sbm", DEMO_SBM_MIN
    if os.environ.get("GRAPHPAR_DATA"):
        try:
            data = load_planetoid("cora", download=False)
            name, mark = "cora", DEMO_CORA_MIN
        except FileNotFoundError:
            data = None
    if data is None:
        data = load("sbm", seed=seed)
        k = data.num_classes
        print(
            f"GCN: Cora not found in GRAPHPAR_DATA; using a generated SBM graph "
            f"({k} planted classes of {data.adjacency.shape[0] // k}, chance {1 / k:.2f})"
        )
    opts = argparse.Namespace(
        dataset=name, graph=None, epochs=200, hidden=16, lr=0.01, dropout=0.5, weight_decay=5e-4,
        early_stopping=None, seed=seed, bias=False,
    )
    ctx = Context(threads=get_threads())
    out = report_fields(opts, data, _train(opts, data, ctx, progress=False), ctx.threads)
    print_report(opts, out)
    ok = out["test_accuracy"] >= mark
    print(f"GCN check: test accuracy {out['test_accuracy']:.4f} >= {mark:.2f}: "
          f"{'ok' if ok else 'FAILED'}")
    return ok
