"""Data sets: the Planetoid citation graphs (Cora, CiteSeer, PubMed) and a generated one.

The files are the original Planetoid ones (``ind.NAME.{x,y,tx,ty,allx,ally,
graph,test.index}``, Yang, Cohen and Salakhutdinov 2016), Python 2 pickles.
They are read with a restricted unpickler that admits only the few numpy and
scipy classes these files hold; any other class or function in a pickle is an
error and is never called. Nothing is allocated in proportion to a size a file
declares: every array a pickle builds must be held in the pickle's own bytes
(a declared shape is checked before anything is allocated), and the split is
checked against the data (test vertices unique, in range and as many as the
rows of ``tx`` and ``ty``). Every error names the file (and, for
``test.index``, the 1-based line).

:func:`synthetic_sbm` generates a Planetoid-like data set (a stochastic block
model with planted classes) for runs without the files.
"""

from __future__ import annotations

import hashlib
import io
import math
import os
import pickle
import re
import urllib.error
import urllib.request
from collections import defaultdict
from pathlib import Path
from typing import NamedTuple

import numpy as np
import scipy.sparse as sp

from graphpar._validation import check_csr_arrays
from graphpar.errors import GraphFormatError, LimitError, error_message
from graphpar.limits import check_memory, check_vertex_count

__all__ = [
    "PLANETOID_NAMES", "Planetoid", "load_planetoid", "planetoid_files", "synthetic_sbm",
]

PLANETOID_NAMES = ("cora", "citeseer", "pubmed")
PLANETOID_URL = "https://raw.githubusercontent.com/kimiyoung/planetoid/master/data/"
ENV_DATA = "GRAPHPAR_DATA"
_PARTS = ("x", "y", "tx", "ty", "allx", "ally", "graph", "test.index")
# The sums the project keeps, in ``sha256sum`` format, installed with the package.
SUMS_FILE = Path(__file__).resolve().parent / "data" / "planetoid.sha256"
_TIMEOUT = 60.0


class Planetoid(NamedTuple):
    """A Planetoid data set with its standard public split.

    Attributes
    ----------
    adjacency : scipy.sparse.csr_array of float64, shape (n, n)
        Undirected, binary (a self-loop in the file is a 1 on the diagonal).
    features : scipy.sparse.csr_array of float32, shape (n, f)
        Raw bag-of-words features (not normalised).
    labels : ndarray of int64, shape (n,)
        Class of each vertex; -1 where the files give none (CiteSeer's
        isolated vertices outside the test set).
    train_mask, val_mask, test_mask : ndarray of bool, shape (n,)
        The public split (140/500/1000 for Cora).

    Examples
    --------
    >>> import numpy as np, scipy.sparse as sp
    >>> d = Planetoid(sp.csr_array((2, 2)), sp.csr_array((2, 3)), np.array([0, 2]),
    ...               np.array([True, False]), np.array([False, True]), np.zeros(2, bool))
    >>> d.num_classes
    3
    """

    adjacency: sp.csr_array
    features: sp.csr_array
    labels: np.ndarray
    train_mask: np.ndarray
    val_mask: np.ndarray
    test_mask: np.ndarray

    @property
    def num_classes(self) -> int:
        """Number of classes."""
        return int(self.labels.max()) + 1


# ---------------------------------------------------------------- unpickling
# The Planetoid pickles hold 2-D numeric arrays, CSR matrices and a dict of lists.
_NUMERIC = "biuf"


class _PickledArray:
    """Stand-in for a numpy array: the declared shape is checked before anything is allocated.

    Built by ``_reconstruct`` (or a call of ``numpy.ndarray``) with a shape and a
    dtype, then given its bytes by ``__setstate__``. Both the declared shape and
    the state must fit in the pickle's own bytes: an array a pickle builds is
    backed by data stored in it. The array is made only when the loader asks
    for it (at most a few per file), so a pickle that reuses one string for many
    arrays does not multiply its size.
    """

    def __init__(self, unpickler: _RestrictedUnpickler, shape, dtype):
        self.unpickler = unpickler
        self.shape, self.dtype = unpickler.check_backed(shape, dtype)
        self.fortran = False
        self.raw = None
        self.array = None

    def __setstate__(self, state):
        if not isinstance(state, tuple) or len(state) not in (4, 5):
            raise pickle.UnpicklingError("malformed numpy array state")
        shape, dtype, fortran, raw = state[-4:]
        shape, dtype = self.unpickler.check_backed(shape, dtype)
        if isinstance(raw, str):  # a Python 2 str, decoded as latin-1 by the unpickler
            raw = self.unpickler.latin1(raw)
        if not isinstance(raw, bytes):
            raise pickle.UnpicklingError(
                f"the data of a numpy array must be bytes, got {type(raw).__name__}"
            )
        nbytes = math.prod(shape) * dtype.itemsize
        if len(raw) != nbytes:
            raise pickle.UnpicklingError(
                f"an array of shape {shape} and dtype {dtype} needs {nbytes} bytes but "
                f"the pickle holds {len(raw)}"
            )
        self.shape, self.dtype, self.fortran, self.raw = shape, dtype, bool(fortran), raw

    def materialise(self) -> np.ndarray:
        if self.array is None:
            if self.raw is None:  # never given data: zeros (backed, see check_backed)
                self.array = np.zeros(self.shape, dtype=self.dtype)
            else:
                flat = np.frombuffer(self.raw, dtype=self.dtype)
                order = "F" if self.fortran else "C"
                self.array = flat.reshape(self.shape, order=order).copy(order="K")
        return self.array


class _PickledSparse:
    """Stand-in for scipy's ``csr_matrix``: receives the pickled state, runs nothing."""

    def __setstate__(self, state):
        if not isinstance(state, dict):
            raise pickle.UnpicklingError("unexpected csr_matrix state")
        self.state = state


def _short(obj, width: int = 40) -> str:
    """A short description of a value from an untrusted file (never a long or deep repr)."""
    if isinstance(obj, str | bytes):
        return repr(obj[:width]) + ("..." if len(obj) > width else "")
    if isinstance(obj, bool | float | np.generic) or (
        isinstance(obj, int) and obj.bit_length() <= 64
    ):
        return repr(obj)
    if isinstance(obj, tuple) and len(obj) <= 4 and all(
        isinstance(x, int | np.integer) and int(x).bit_length() <= 64 for x in obj
    ):
        return repr(tuple(int(x) for x in obj))
    return "an array" if isinstance(obj, _PickledArray) else f"a {type(obj).__name__}"


class _RestrictedUnpickler(pickle.Unpickler):
    """Admits only the globals of the Planetoid files, each checked or replaced by a stand-in."""

    def __init__(self, data: bytes, path: Path):
        super().__init__(io.BytesIO(data), encoding="latin1")
        self.path = path
        self.size = len(data)
        self._encoded: dict[int, tuple[str, bytes]] = {}
        numpy_scalar = np.float64(0).__reduce__()[0]

        # Each admitted callable makes something no larger than its arguments, once
        # per distinct argument, so that no pickle can multiply its own size.
        def list_factory(*args):
            if args:
                raise pickle.UnpicklingError("list is admitted only as defaultdict's factory")
            return []

        def default_dict(*args):
            if args != (list_factory,):
                raise pickle.UnpicklingError("only defaultdict(list) is admitted")
            return defaultdict(list)

        def encode(text, encoding="latin1"):
            # the one use of _codecs.encode in protocol-2 pickles: text to bytes
            if encoding.replace("-", "").lower() != "latin1":
                raise pickle.UnpicklingError("_codecs.encode is admitted only for latin-1")
            return self.latin1(text)

        def ndarray(shape, dtype=float):
            return _PickledArray(self, shape, dtype)

        def reconstruct(subtype, shape, dtype):
            if subtype is not ndarray:
                raise pickle.UnpicklingError("_reconstruct is admitted only for numpy.ndarray")
            return _PickledArray(self, shape, dtype)

        def scalar(dtype, *data):
            if not isinstance(dtype, np.dtype) or dtype.kind not in _NUMERIC:
                raise pickle.UnpicklingError(f"numpy scalars must be numeric, got {dtype!r}")
            return numpy_scalar(dtype, *data)

        self.allowed = {
            ("numpy", "ndarray"): ndarray,
            ("numpy", "dtype"): np.dtype,
            ("collections", "defaultdict"): default_dict,
            ("__builtin__", "list"): list_factory,
            ("builtins", "list"): list_factory,
            ("_codecs", "encode"): encode,
        }
        for mod in ("numpy.core.multiarray", "numpy._core.multiarray"):
            self.allowed[(mod, "_reconstruct")] = reconstruct
            self.allowed[(mod, "scalar")] = scalar
        for mod in ("scipy.sparse.csr", "scipy.sparse._csr"):
            self.allowed[(mod, "csr_matrix")] = _PickledSparse

    def find_class(self, module, name):
        try:
            return self.allowed[(module, name)]
        except KeyError:
            raise pickle.UnpicklingError(
                f"refusing to load global '{module}.{name}': only the numpy and scipy "
                "classes of the Planetoid files are admitted"
            ) from None

    def latin1(self, text) -> bytes:
        """``text.encode("latin1")``, once per string object of the pickle."""
        if not isinstance(text, str):
            raise pickle.UnpicklingError(f"expected text, got {type(text).__name__}")
        hit = self._encoded.get(id(text))
        if hit is None:
            hit = self._encoded[id(text)] = (text, text.encode("latin1"))  # keeps text alive
        return hit[1]

    def check_backed(self, shape, dtype) -> tuple[tuple[int, ...], np.dtype]:
        """The shape and dtype of a pickled array, refused unless the file can hold its data."""
        if isinstance(shape, int | np.integer) and not isinstance(shape, bool):
            shape = (shape,)
        if not isinstance(shape, tuple) or not all(
            isinstance(d, int | np.integer) and not isinstance(d, bool) and d >= 0
            for d in shape
        ):
            raise pickle.UnpicklingError(
                f"an array shape must be a tuple of non-negative integers, got {_short(shape)}"
            )
        shape = tuple(int(d) for d in shape)
        dtype = np.dtype(dtype)
        if dtype.kind not in _NUMERIC or dtype.shape or dtype.names:
            raise pickle.UnpicklingError(
                f"only numeric arrays are admitted, got dtype {dtype}"
            )
        nbytes = math.prod(shape) * dtype.itemsize
        if nbytes > self.size:
            raise LimitError(
                f"{self.path}: the pickle declares an array of shape {shape} and dtype "
                f"{dtype} ({nbytes} bytes), more than the {self.size} bytes of the file "
                "can hold; an array in a Planetoid file must be stored in it"
            )
        return shape, dtype


def _read(path: Path) -> bytes:
    check_memory(path.stat().st_size, what="reading the file", source=str(path))
    return path.read_bytes()


def _unpickle(path: Path):
    data = _read(path)
    try:
        return _materialise(_RestrictedUnpickler(data, path).load(), path, len(data))
    except (LimitError, GraphFormatError):
        raise
    except Exception as exc:  # noqa: BLE001 - untrusted bytes: any failure is a bad file
        raise GraphFormatError(
            f"{path}: not a valid Planetoid pickle: {error_message(exc)}"
        ) from exc


def _materialise(obj, path: Path, stored: int):
    """Turn the stand-ins into numpy and scipy arrays, checking what came in."""
    if isinstance(obj, _PickledSparse):
        return _sparse(obj.state, path)
    if isinstance(obj, _PickledArray):
        return obj.materialise()
    if isinstance(obj, dict):
        # The graph, checked by _graph_edges. A pickle can list one stored list for
        # many vertices: count the neighbours before anything is made for each.
        total = sum(len(v) for v in obj.values() if isinstance(v, list | tuple))
        if total > stored:
            raise LimitError(
                f"{path}: the adjacency lists hold {total} neighbours in all, more than "
                f"the {stored} bytes of the file can hold (lists repeated by reference)"
            )
        return obj
    raise GraphFormatError(f"{path}: unexpected content of type {type(obj).__name__}")


def _sparse(state: dict, path: Path) -> sp.csr_array:
    def bad(what):
        return GraphFormatError(f"{path}: malformed sparse matrix in the pickle: {what}")

    shape = state.get("_shape", state.get("shape"))
    if (
        not isinstance(shape, tuple) or len(shape) != 2
        or not all(isinstance(d, int | np.integer) and not isinstance(d, bool) and d >= 0
                   for d in shape)
    ):
        raise bad(f"its shape must be two non-negative integers, got {_short(shape)}")
    rows, cols = shape
    # Every Planetoid matrix ends up dense somewhere (the label matrices here, the
    # features as a model's input): its dense size is what it may cost.
    check_memory(
        rows * cols * 8, what=f"a sparse matrix of declared shape {shape} (as a dense array)",
        source=str(path),
    )
    parts = []
    for key in ("data", "indices", "indptr"):
        arr = state.get(key)
        if not isinstance(arr, _PickledArray):
            raise bad(f"its {key} must be a numpy array, got {type(arr).__name__}")
        arr = arr.materialise()
        if arr.ndim != 1 or (key != "data" and arr.dtype.kind not in "iu"):
            raise bad(f"its {key} must be a 1-D integer array, got {arr.dtype} {arr.shape}")
        parts.append(arr)
    data, indices, indptr = parts
    if indptr.size != rows + 1:
        raise bad(f"shape {shape} needs {rows + 1} row offsets, the file holds {indptr.size}")
    indptr = indptr.astype(np.int64)
    indices = indices.astype(np.int64)
    check_csr_arrays(indptr, indices, data, shape, f"{path}: the sparse matrix")
    nnz = int(indptr[-1])
    return sp.csr_array((data[:nnz], indices[:nnz], indptr), shape=shape)


# ---------------------------------------------------------------- files
def planetoid_files(name: str) -> list[str]:
    """The eight file names of a Planetoid data set.

    Examples
    --------
    >>> planetoid_files("cora")[:2]
    ['ind.cora.x', 'ind.cora.y']
    """
    name = _check_name(name)
    return [f"ind.{name}.{part}" for part in _PARTS]


def _check_name(name) -> str:
    if not isinstance(name, str) or name.lower() not in PLANETOID_NAMES:
        raise ValueError(f"name must be one of {', '.join(PLANETOID_NAMES)}; got {name!r}")
    return name.lower()


def known_sums(path: Path | None = None) -> dict[str, str]:
    """The SHA-256 sums kept in the project (``graphpar/data/planetoid.sha256``).

    Examples
    --------
    >>> len(known_sums()["ind.cora.x"])
    64
    """
    path = SUMS_FILE if path is None else Path(path)
    sums = {}
    if not path.is_file():
        return sums
    for line in path.read_text().splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            digest, fname = line.split()
            sums[fname.lstrip("*")] = digest.lower()
    return sums


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _default_root() -> Path:
    env = os.environ.get(ENV_DATA)
    if env:
        return Path(env)
    return Path.home() / ".cache" / "graphpar"


def _find_dir(root: Path, files: list[str]) -> Path | None:
    for d in (root / "planetoid", root):
        if all((d / f).is_file() for f in files):
            return d
    return None


def _download(files: list[str], dest: Path, sums: dict[str, str], url: str) -> None:
    unverifiable = [f for f in files if f not in sums]
    if unverifiable:
        where = SUMS_FILE.name if SUMS_FILE.is_file() else f"{SUMS_FILE} is missing"
        raise FileNotFoundError(
            f"missing {', '.join(unverifiable)} in {dest}, and the project keeps no "
            f"SHA-256 sum for them ({where}), so a download could not be "
            f"verified and is refused. Fetch them yourself from {url} into {dest}, "
            f"or set {ENV_DATA} to a folder holding planetoid/ with them."
        )
    from graphpar.io import atomic_write

    dest.mkdir(parents=True, exist_ok=True)
    for fname in files:
        h = hashlib.sha256()
        # atomic: a failed, corrupt or killed download leaves no file behind
        with urllib.request.urlopen(url + fname, timeout=_TIMEOUT) as resp, \
                atomic_write(dest / fname, "wb") as f:
            while block := resp.read(1 << 20):
                f.write(block)
                h.update(block)
            if h.hexdigest() != sums[fname]:
                raise ValueError(
                    f"downloaded {fname} from {url} has SHA-256 {h.hexdigest()}, expected "
                    f"{sums[fname]}; the file was discarded"
                )


def _locate(name: str, root, download: bool, url: str) -> Path:
    files = planetoid_files(name)
    base = Path(root).expanduser() if root is not None else _default_root()
    found = _find_dir(base, files)
    if found is not None:
        return found
    dest = base / "planetoid"
    missing = [f for f in files if not (dest / f).is_file()]
    hint = (
        f"Planetoid {name!r}: missing {', '.join(missing)} in {dest}. Put the files "
        f"there (from {url}), pass root=... (--data-dir on the command line), or set "
        f"{ENV_DATA} to a folder holding "
        f"planetoid/ind.{name}.*"
    )
    if not download:
        raise FileNotFoundError(hint)
    try:
        _download(missing, dest, known_sums(), url)
    except (urllib.error.URLError, TimeoutError, ConnectionError) as exc:
        raise FileNotFoundError(f"{hint}. Download failed: {exc}") from exc
    return dest


# ---------------------------------------------------------------- split
_VALIDATION = 500  # the public split: the 500 vertices after the training ones
_INT_TOKEN = re.compile(rb"[+-]?[0-9]+")


def _test_index(path: Path) -> tuple[list[int], list[int]]:
    """The test vertices of a ``test.index`` file and their 1-based line numbers."""
    values, lines = [], []
    for lineno, line in enumerate(_read(path).split(b"\n"), start=1):
        token = line.strip()
        if not token:
            continue
        if not _INT_TOKEN.fullmatch(token):
            raise GraphFormatError(
                f"{path}: line {lineno}: expected one vertex id (an integer) per line, "
                f"got {_short(token.decode('latin1'))}"
            )
        if len(token) > 1000:  # int() refuses thousands of digits; far out of range anyway
            raise GraphFormatError(
                f"{path}: line {lineno}: vertex id {_short(token.decode('latin1'))} is "
                "out of range"
            )
        values.append(int(token))
        lines.append(lineno)
    if not values:
        raise GraphFormatError(f"{path}: no test indices")
    return values, lines


def _check_split(values, lines, path: Path, n_all: int, n: int, rows: int, d: Path, name):
    """The test vertices are unique, in ``[n_all, n)``, start at ``n_all``, one per tx row."""
    first_line = {}
    for v, lineno in zip(values, lines, strict=True):
        if not n_all <= v < n:
            raise GraphFormatError(
                f"{path}: line {lineno}: test vertex {v} is outside [{n_all}, {n}): the "
                f"test vertices follow the {n_all} rows of ind.{name}.allx and are "
                f"vertices of ind.{name}.graph ({n} vertices)"
            )
        if v in first_line:
            raise GraphFormatError(
                f"{path}: line {lineno}: test vertex {v} is listed twice (first on line "
                f"{first_line[v]})"
            )
        first_line[v] = lineno
    if len(values) != rows:
        raise GraphFormatError(
            f"{path}: lists {len(values)} test vertices but {d / f'ind.{name}.tx'} and "
            f"ind.{name}.ty have {rows} rows (one per test vertex)"
        )
    lo = min(values)
    if lo != n_all:
        raise GraphFormatError(
            f"{path}: line {first_line[lo]}: the smallest test vertex is {lo}, but the test "
            f"vertices must start right after the {n_all} rows of ind.{name}.allx"
        )


def _vertex_id(x, path: Path, where: str) -> int:
    if isinstance(x, int | np.integer) and not isinstance(x, bool) and x >= 0:
        return int(x)
    raise GraphFormatError(
        f"{path}: vertex ids must be non-negative integers, got {_short(x)} "
        f"({type(x).__name__}) {where}"
    )


def _graph_edges(graph, path: Path) -> tuple[np.ndarray, np.ndarray, int]:
    """The (source, target) pairs of a dict of adjacency lists, and its vertex count."""
    if not isinstance(graph, dict):
        raise GraphFormatError(f"{path}: expected a dict of adjacency lists")
    src, dst = [], []
    n = 0
    for key, nbrs in graph.items():
        u = _vertex_id(key, path, "as a key")
        if not isinstance(nbrs, list | tuple):
            raise GraphFormatError(
                f"{path}: the neighbours of vertex {u} must be a list of vertex ids, got "
                f"{type(nbrs).__name__}"
            )
        n = max(n, u + 1)
        for x in nbrs:
            v = _vertex_id(x, path, f"in the list of vertex {u}")
            n = max(n, v + 1)
            src.append(u)
            dst.append(v)
    check_vertex_count(n, edges=len(src), source=str(path), what="names")
    return np.asarray(src, dtype=np.int64), np.asarray(dst, dtype=np.int64), n


def _matrix(obj, path: Path):
    """A 2-D numeric matrix (numpy or CSR) with finite values, else an error naming the file."""
    if sp.issparse(obj):
        return obj  # checked when unpickled
    if not isinstance(obj, np.ndarray) or obj.ndim != 2:
        what = f"an array of shape {obj.shape}" if isinstance(obj, np.ndarray) else \
            type(obj).__name__
        raise GraphFormatError(f"{path}: expected a 2-D matrix, got {what}")
    if obj.dtype.kind == "f" and not np.isfinite(obj).all():
        i, j = np.argwhere(~np.isfinite(obj))[0]
        raise GraphFormatError(f"{path}: non-finite value {obj[i, j]} at row {i}, column {j}")
    return obj


def _labels(onehot) -> np.ndarray:
    """The class of each row of a one-hot matrix; -1 for a row without one."""
    m = onehot.toarray() if sp.issparse(onehot) else np.asarray(onehot)
    return np.where(m.any(axis=1), m.argmax(axis=1), -1).astype(np.int64)


def _build(objs: dict, test_index, d: Path, name: str) -> Planetoid:
    """The public split, as Kipf and Welling's ``gcn/utils.py`` builds it, checked first."""
    f = {p: d / f"ind.{name}.{p}" for p in _PARTS}
    y, tx, ty, allx, ally = (_matrix(objs[p], f[p]) for p in ("y", "tx", "ty", "allx", "ally"))
    _matrix(objs["x"], f["x"])
    src, dst, n_graph = _graph_edges(objs["graph"], f["graph"])
    n_all = allx.shape[0]
    shapes = {"tx": tx.shape, "ty": ty.shape, "allx": allx.shape, "ally": ally.shape}
    for a, b, axis, what in (("allx", "ally", 0, "rows"), ("tx", "ty", 0, "rows"),
                             ("allx", "tx", 1, "columns (features)"),
                             ("ally", "ty", 1, "columns (classes)")):
        if shapes[a][axis] != shapes[b][axis]:
            raise GraphFormatError(
                f"{d}: ind.{name}.{a} and ind.{name}.{b} must have as many {what}, got "
                f"{shapes[a][axis]} and {shapes[b][axis]}"
            )
    n_train = y.shape[0]
    if n_train + _VALIDATION > n_all:
        raise GraphFormatError(
            f"{f['y']}: {n_train} training vertices and the {_VALIDATION} validation "
            f"vertices after them need {n_train + _VALIDATION} rows in ind.{name}.allx, "
            f"which has {n_all}"
        )
    values, lines = test_index
    _check_split(values, lines, f["test.index"], n_all, n_graph, tx.shape[0], d, name)
    test_idx = np.asarray(values, dtype=np.int64)
    n = int(test_idx.max()) + 1
    if n_graph > n:
        raise GraphFormatError(
            f"{f['graph']}: names vertex {n_graph - 1}, but the rows of ind.{name}.allx and "
            f"the test vertices of ind.{name}.test.index cover only vertices 0..{n - 1}"
        )
    # Test indices with gaps (CiteSeer): pad tx to the full range with zero rows,
    # tx row i going to row test_sorted[i] - n_all as in gcn/utils.py, then
    # features[test_idx, :] = features[test_sorted, :] as a row permutation.
    test_sorted = np.sort(test_idx)
    span = n - n_all
    txc = sp.coo_array(tx)
    tx_ext = sp.csr_array(
        (txc.data, (test_sorted[txc.row] - n_all, txc.col)), shape=(span, tx.shape[1])
    )
    perm = np.arange(n)
    perm[test_idx] = test_sorted
    features = sp.vstack([sp.csr_array(allx), tx_ext], format="csr")[perm]
    # The same permutation on the labels puts ty row i at vertex test_idx[i].
    labels = np.full(n, -1, dtype=np.int64)
    labels[:n_all] = _labels(ally)
    labels[test_idx] = _labels(ty)

    train = np.zeros(n, dtype=bool)
    val = np.zeros(n, dtype=bool)
    test = np.zeros(n, dtype=bool)
    train[:n_train] = True
    val[n_train:n_train + _VALIDATION] = True
    test[test_idx] = True
    # An undirected simple graph, as networkx.from_dict_of_lists makes it: each
    # pair once, both directions, a self-loop once.
    rows = np.concatenate([src, dst])
    cols = np.concatenate([dst, src])
    adj = sp.csr_array((np.ones(rows.size), (rows, cols)), shape=(n, n))
    adj.sum_duplicates()
    adj.data[:] = 1.0
    return Planetoid(
        adjacency=adj,
        features=sp.csr_array(features, dtype=np.float32),
        labels=labels,
        train_mask=train,
        val_mask=val,
        test_mask=test,
    )


def load_planetoid(
    name: str, root: str | os.PathLike | None = None, *, download: bool = True
) -> Planetoid:
    """Load a Planetoid citation graph with the standard public split.

    Parameters
    ----------
    name : {"cora", "citeseer", "pubmed"}
        The data set.
    root : path, optional
        Folder holding the files, either directly or in a ``planetoid/``
        subfolder. Default: ``$GRAPHPAR_DATA``, else ``~/.cache/graphpar``.
    download : bool, default True
        Download missing files from the Planetoid repository
        (:data:`PLANETOID_URL`) into ``root/planetoid``. Every downloaded file
        must match the SHA-256 sum the project keeps (``graphpar/data/planetoid.sha256``);
        a file without a kept sum is not downloaded at all. Files already on
        disk are checked against the kept sums too.

    Returns
    -------
    Planetoid
        ``(adjacency, features, labels, train_mask, val_mask, test_mask)``,
        built exactly as Kipf and Welling's ``load_data``: training vertices
        are the first ``len(y)``, validation the next 500, test the vertices
        of ``test.index``; with gaps in the test indices (CiteSeer) the
        missing vertices get zero features and label -1 and are in no mask.

    Raises
    ------
    FileNotFoundError
        When files are missing and cannot be downloaded; the message names
        the files, the folder and ``GRAPHPAR_DATA``.
    ValueError
        For an unknown name or a checksum mismatch.
    graphpar.errors.GraphFormatError
        (a ``ValueError``) For a file that is not a Planetoid pickle
        (including any pickle that names a class or function other than the
        admitted numpy and scipy ones), a graph whose vertex ids are not
        non-negative integers, matrices whose shapes disagree, or a
        ``test.index`` whose entries are not integers, repeat a vertex, lie
        outside the vertices after ``allx`` or are not one per row of
        ``tx``/``ty``. The message names the file (and the 1-based line of
        ``test.index``).
    graphpar.errors.LimitError
        (a ``ValueError``) For a pickle that declares an array larger than the
        file holds, a sparse matrix whose dense size exceeds
        ``GRAPHPAR_MAX_MEMORY``, or a graph that names more vertices than its
        edges reach beyond ``GRAPHPAR_MAX_VERTICES``. Nothing is allocated
        before these checks.

    Examples
    --------
    >>> data = load_planetoid("cora")  # doctest: +SKIP
    >>> data.adjacency.shape, int(data.train_mask.sum()), data.num_classes  # doctest: +SKIP
    ((2708, 2708), 140, 7)
    """
    name = _check_name(name)
    d = _locate(name, root, download, PLANETOID_URL)
    sums = known_sums()
    for fname in planetoid_files(name):
        if fname in sums:
            digest = _sha256(d / fname)
            if digest != sums[fname]:
                raise ValueError(
                    f"{d / fname} has SHA-256 {digest}, expected {sums[fname]} "
                    f"({SUMS_FILE.name}); the file is corrupt or not the Planetoid original"
                )
    objs = {p: _unpickle(d / f"ind.{name}.{p}") for p in _PARTS[:7]}
    test_idx = _test_index(d / f"ind.{name}.test.index")
    return _build(objs, test_idx, d, name)


# ---------------------------------------------------------------- a generated data set
def synthetic_sbm(seed: int = 0) -> Planetoid:
    """A generated Planetoid-like data set: a stochastic block model with planted classes.

    7 classes of 300 vertices; about 6 neighbours in a vertex's own block and
    2 in the others (:func:`graphpar.generate.sbm`). The 64 features are a
    class indicator, which names a random class for half of the vertices,
    plus sparse random noise (density 0.05), so that the features alone
    allow about 57% accuracy and the graph is needed to go beyond it. The
    split follows Planetoid's: 20 training vertices per class, 500
    validation and 1000 test vertices. The same seed gives the same data.

    Parameters
    ----------
    seed : int, default 0
        Seed of the graph, the features and the split (a non-negative integer).

    Returns
    -------
    Planetoid
        With ``adjacency`` (2100 x 2100), ``features`` (2100 x 64, float32),
        ``labels`` (the planted classes) and the three masks.

    Examples
    --------
    >>> d = synthetic_sbm(0)
    >>> d.adjacency.shape, int(d.train_mask.sum()), d.num_classes
    ((2100, 2100), 140, 7)
    """
    from graphpar.generate import sbm

    blocks, size, features, flip = 7, 300, 64, 0.5
    g, labels = sbm([size] * blocks, 6.0 / size, 2.0 / (size * (blocks - 1)), seed=seed)
    rng = np.random.default_rng(seed)
    n = g.n
    shown = np.where(rng.random(n) < flip, rng.integers(0, blocks, n), labels)
    X = (rng.random((n, features)) < 0.05).astype(np.float32)
    X[np.arange(n), shown] = 1.0
    train = np.zeros(n, bool)
    for c in range(blocks):
        train[rng.choice(np.flatnonzero(labels == c), 20, replace=False)] = True
    rest = rng.permutation(np.flatnonzero(~train))
    val = np.zeros(n, bool)
    val[rest[:500]] = True
    test = np.zeros(n, bool)
    test[rest[500:1500]] = True
    return Planetoid(g.to_scipy(), sp.csr_array(X), labels.astype(np.int64), train, val, test)
